// The launcher's job (launcher.hpp).
#include "launcher.hpp"

#include <cstdlib>
#include <initializer_list>

namespace hcube::cli {

namespace {

// The first of `vars` that is set, as a number; `otherwise` when none is.
int first_set(std::initializer_list<const char*> vars, int otherwise) {
    for (const char* var : vars)
        if (const char* v = std::getenv(var)) return std::atoi(v);
    return otherwise;
}

} // namespace

int launched_processes() {
    const int n = first_set({"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"}, 1);
    return n > 0 ? n : 1;
}

int launched_rank() {
    return first_set({"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"}, 0);
}

} // namespace hcube::cli
