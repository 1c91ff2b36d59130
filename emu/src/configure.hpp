// A machine's configuration checked and its `automatic` choices resolved from
// the environment (HCUBE_EXECUTOR, HCUBE_LINKS, HCUBE_BACKEND). Private to
// emu/src.
#pragma once

#include <hcube/config.hpp>

namespace hcube::detail {

// Throws usage_error naming the first value outside its range (`c` with its
// executor resolved).
void validate(const config& c);
link_impl resolve_links(link_impl l);
backend_kind resolve_backend(backend_kind b);

} // namespace hcube::detail
