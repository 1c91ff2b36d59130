#include <hcube/catalog.hpp>

namespace hcube::detail {

void register_personalized(catalog&) {}

} // namespace hcube::detail
