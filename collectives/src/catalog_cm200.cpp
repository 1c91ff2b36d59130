#include <hcube/catalog.hpp>

namespace hcube::detail {

void register_cm200(catalog&) {}

} // namespace hcube::detail
