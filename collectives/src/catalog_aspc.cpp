#include <hcube/catalog.hpp>

namespace hcube::detail {

void register_aspc(catalog&) {}

} // namespace hcube::detail
