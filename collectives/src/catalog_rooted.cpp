#include <hcube/catalog.hpp>

namespace hcube::detail {

void register_rooted(catalog&) {}

} // namespace hcube::detail
