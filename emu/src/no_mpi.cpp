// The MPI backend when hcube is built without MPI (meson -Dmpi=disabled, or
// no MPI found): the backend is refused by name.
#include <hcube/error.hpp>

#include "remote.hpp"

std::unique_ptr<hcube::detail::remote> hcube::detail::make_mpi_remote(machine_state&) {
    throw usage_error("the mpi backend is not built into this hcube: install Open MPI "
                      "(openmpi-bin libopenmpi-dev) and configure with meson -Dmpi=enabled");
}
