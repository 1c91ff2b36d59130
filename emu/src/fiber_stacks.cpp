// The fibers' stacks: sizes and guards (fiber_stacks.hpp).
#include "fiber_stacks.hpp"

#include "executor.hpp"

namespace hcube::detail {

std::size_t fiber_stack_stride(std::size_t stack_bytes) noexcept {
    const std::size_t page = page_bytes();
    return (stack_bytes + page - 1) / page * page + zone_pages * page;
}

long long fiber_guard_pages(int p, const os_limits& lim) noexcept {
    if (lim.max_map_count < 0) return p;
    const long long spare = lim.max_map_count - lim.maps_in_use - other_mappings;
    return std::clamp<long long>(spare / 2, 0, p);
}

} // namespace hcube::detail
