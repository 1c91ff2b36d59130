// The table of backends (backend.hpp): the only place that names each one.
#include "backend.hpp"
#include "state.hpp"

namespace hcube::detail {

std::unique_ptr<backend> make_in_process_backend(machine_state& m);
// Joins the MPI job and gives this rank its subcube (mpi/), or refuses when
// hcube was built without MPI.
std::unique_ptr<backend> make_mpi_backend(machine_state& m);

const std::array<backend_row, 2> backend_rows = {{
    {backend_kind::in_process, "in-process", make_in_process_backend},
    {backend_kind::mpi, "mpi", make_mpi_backend},
}};

std::unique_ptr<backend> make_backend(machine_state& m) {
    for (const backend_row& row : backend_rows)
        if (row.kind == m.cfg.backend) return row.make(m);
    return backend_rows.front().make(m);
}

} // namespace hcube::detail

std::string_view hcube::to_string(backend_kind b) noexcept {
    for (const detail::backend_row& row : detail::backend_rows)
        if (row.kind == b) return row.name;
    return "automatic";
}
