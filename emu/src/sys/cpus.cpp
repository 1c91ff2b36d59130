// The CPUs this process may use (sys/cpus.hpp).
#include "cpus.hpp"

#include <algorithm>
#include <thread>

#include <pthread.h>
#include <sched.h>

namespace hcube {

std::vector<int> detail::usable_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    std::vector<int> cpus;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        for (int c = 0; c < CPU_SETSIZE; ++c)
            if (CPU_ISSET(c, &set)) cpus.push_back(c);
    if (cpus.empty())
        for (unsigned c = 0; c < std::max(1u, std::thread::hardware_concurrency()); ++c)
            cpus.push_back(int(c));
    return cpus;
}

bool detail::move_to_cpu(int cpu) noexcept {
    cpu_set_t mask, one;
    if (pthread_getaffinity_np(pthread_self(), sizeof mask, &mask) != 0 || !CPU_ISSET(cpu, &mask))
        return false;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    if (pthread_setaffinity_np(pthread_self(), sizeof one, &one) != 0) return false;
    pthread_setaffinity_np(pthread_self(), sizeof mask, &mask);
    return true;
}

} // namespace hcube
