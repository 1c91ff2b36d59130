#include <hcube/catalog.hpp>

namespace hcube::detail {

void register_reductions(catalog&) {}

} // namespace hcube::detail
