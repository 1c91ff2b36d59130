// The CPUs this process may use and moving a thread onto one. Private to
// emu/src.
#pragma once

#include <vector>

namespace hcube::detail {

// The CPUs the calling thread may run on (at least one entry).
std::vector<int> usable_cpus();
// Moves the calling thread to `cpu` now (binding itself there moves it at
// once) and gives it back its own affinity mask, under which the kernel
// mostly leaves it there. False if the mask excludes `cpu` or a call failed.
bool move_to_cpu(int cpu) noexcept;

} // namespace hcube::detail
