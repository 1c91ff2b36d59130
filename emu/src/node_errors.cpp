// The usage errors of the node primitives (node_errors.hpp).
#include "node_errors.hpp"

#include <hcube/error.hpp>
#include <hcube/node.hpp>

namespace hcube::detail {

namespace {

std::string node_prefix(int id) {
    return "node " + std::to_string(id) + ": ";
}

} // namespace

void fail(int id, const std::string& what) {
    throw usage_error(node_prefix(id) + what);
}

void bad_dim(int id, int dim, int k, const char* op) {
    fail(id, std::string(op) + " on dimension " + std::to_string(k) + ", outside 0.." +
                 std::to_string(dim - 1) + " of a " + std::to_string(dim) + "-cube");
}
void too_large(int id, std::size_t bytes) {
    fail(id, "message of " + std::to_string(bytes) + " bytes exceeds the 4 GiB limit");
}
void out_of_memory(int id, std::size_t bytes) {
    fail(id, "out of memory for a message of " + std::to_string(bytes) + " bytes");
}

std::string elements(std::size_t bytes, std::size_t elem) {
    return std::to_string(elem ? bytes / elem : 0) + " elements of " + std::to_string(elem) +
           " bytes";
}

std::string type_mismatch(std::uint32_t sent, std::uint32_t received) {
    return "message was sent as " + wire_type_name(sent) + ", received as " +
           wire_type_name(received);
}

} // namespace hcube::detail
