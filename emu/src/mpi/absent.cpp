// The MPI backend when hcube is built without MPI (meson -Dmpi=disabled, or
// no MPI found): the backend is refused by name.
#include <hcube/error.hpp>

#include "../backend.hpp"

namespace hcube::detail {

std::unique_ptr<backend> make_mpi_backend(machine_state&) {
    throw usage_error("the mpi backend is not built into this hcube: install Open MPI "
                      "(openmpi-bin libopenmpi-dev) and configure with meson -Dmpi=enabled");
}

} // namespace hcube::detail
