// The system's limits and what a machine takes of them (hcube/system.hpp).
#include <hcube/system.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <string>
#include <vector>

#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include "executor.hpp"
#include "links/message.hpp"
#include "sys/cpus.hpp"

namespace hcube {

namespace {

std::string file_text(const char* path) {
    std::ifstream f(path);
    return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// The number `text` starts with (after blanks), or `otherwise`.
long long number_in(const std::string& text, long long otherwise = -1) {
    try {
        return std::stoll(text);
    } catch (const std::exception&) {
        return otherwise;
    }
}

long long count_lines(const char* path) {
    std::ifstream f(path);
    return std::count(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>(), '\n');
}

std::string status_field(const char* path, const std::string& key) {
    std::ifstream f(path);
    for (std::string line; std::getline(f, line);)
        if (line.rfind(key, 0) == 0) return line.substr(key.size());
    return "";
}

// A number of bytes in GiB, or MiB below 1 GiB, with one decimal.
std::string mebibytes(double bytes) {
    const bool gib = bytes >= double(1ull << 30);
    std::ostringstream os;
    os << std::fixed << std::setprecision(1) << bytes / double(1ull << (gib ? 30 : 20))
       << (gib ? " GiB" : " MiB");
    return os.str();
}

// A thread's stack and guard page as std::thread makes them (glibc's
// defaults: the stack is `ulimit -s`, 8 MiB unless changed).
std::pair<std::uint64_t, std::uint64_t> default_thread_stack() {
    std::uint64_t stack = 8 << 20, guard = 4096;
    pthread_attr_t a;
    if (pthread_getattr_default_np(&a) == 0) {
        std::size_t s = 0, g = 0;
        if (pthread_attr_getstacksize(&a, &s) == 0 && s) stack = s;
        if (pthread_attr_getguardsize(&a, &g) == 0) guard = g;
        pthread_attr_destroy(&a);
    }
    return {stack, guard};
}

} // namespace

os_limits read_os_limits() {
    os_limits lim;
    lim.max_map_count = number_in(file_text("/proc/sys/vm/max_map_count"));
    lim.maps_in_use = count_lines("/proc/self/maps");
    lim.pid_max = number_in(file_text("/proc/sys/kernel/pid_max"));
    lim.threads_max = number_in(file_text("/proc/sys/kernel/threads-max"));
    // "0.52 0.58 0.59 3/412 12345": 412 tasks exist.
    const std::string load = file_text("/proc/loadavg");
    if (const auto slash = load.find('/'); slash != std::string::npos)
        lim.tasks = number_in(load.substr(slash + 1), 0);
    rlimit nproc{};
    // Root is exempt from RLIMIT_NPROC.
    if (geteuid() != 0 && getrlimit(RLIMIT_NPROC, &nproc) == 0 && nproc.rlim_cur != RLIM_INFINITY)
        lim.nproc = static_cast<long long>(nproc.rlim_cur);
    lim.own_threads = number_in(status_field("/proc/self/status", "Threads:"), 1);
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0) lim.memory = double(pages) * double(page);
    // /proc/self/statm begins with the pages of address space in use.
    if (rlimit as{}; getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY && page > 0)
        lim.address_space =
            std::max(0.0, double(as.rlim_cur) -
                              double(number_in(file_text("/proc/self/statm"), 0)) * double(page));
    return lim;
}

std::string os_limit_problems(const config& c, const os_limits& lim) {
    const long long p = 1ll << c.dim;
    const std::string threads = "2^" + std::to_string(c.dim) + " node threads";
    // A value to suggest for a limit that must exceed `need`.
    const auto raise_to = [](long long need) {
        return std::to_string(std::bit_ceil(static_cast<unsigned long long>(2 * need)));
    };
    std::vector<std::string> why;
    // Fibers take a few worker threads and one mapping for all stacks (guard
    // pages only as far as vm.max_map_count allows): only memory and address
    // space can refuse.
    const bool threaded = executor_policy_of(resolve_executor(c.executor)).thread_per_node;
    const long long mappings = threaded ? (long long)footprint_of(c, lim).mappings : 0;
    if (const long long need = mappings + lim.maps_in_use;
        threaded && lim.max_map_count >= 0 && need > lim.max_map_count)
        why.push_back(threads + " need about " + std::to_string(mappings) +
                      " memory mappings (a stack and its guard page each) besides the " +
                      std::to_string(lim.maps_in_use) + " in use, and vm.max_map_count is " +
                      std::to_string(lim.max_map_count) +
                      " (raise it: sysctl -w vm.max_map_count=" + raise_to(need) + ")");
    const auto tasks = [&](long long limit, const std::string& name) {
        if (const long long need = p + lim.tasks; threaded && limit >= 0 && need > limit)
            why.push_back(threads + " need " + std::to_string(p) + " thread ids besides the " +
                          std::to_string(lim.tasks) + " tasks running, and " + name + " is " +
                          std::to_string(limit) + " (raise it: sysctl -w " + name + "=" +
                          raise_to(need) + ")");
    };
    tasks(lim.pid_max, "kernel.pid_max");
    tasks(lim.threads_max, "kernel.threads-max");
    if (const long long need = p + lim.own_threads; threaded && lim.nproc >= 0 && need > lim.nproc)
        why.push_back(threads + " and this process's " + std::to_string(lim.own_threads) +
                      " threads exceed RLIMIT_NPROC " + std::to_string(lim.nproc) +
                      " (raise it: ulimit -u " + raise_to(need) + ")");
    // A link takes a 64-byte line and its slots, which take memory only as
    // messages fill them (a slot plane each, emu/src/links/slots.hpp): memory
    // for the line and one slot, address space for every slot.
    const double slots = double(std::bit_ceil(std::max<std::size_t>(c.link_capacity, 1)));
    const double links = double(p) * c.dim;
    const double link_least = links * 2 * double(detail::cache_line);
    const double link_bytes = links * (1 + slots) * double(detail::cache_line);
    if (lim.memory > 0 && link_least > lim.memory)
        why.push_back("its " + std::to_string(std::llround(links)) + " links need at least " +
                      mebibytes(link_least) +
                      " (a 64-byte line and a 64-byte slot each), more than the " +
                      mebibytes(lim.memory) + " of memory");
    // Address space: the links' arena and, with fibers, every node's stack.
    const double stacks =
        threaded ? 0 : double(p) * double(detail::fiber_stack_stride(c.stack_bytes));
    if (const double need = link_bytes + stacks; lim.address_space >= 0 && need > lim.address_space)
        why.push_back("its links" + std::string(threaded ? "" : " and fiber stacks") + " need " +
                      mebibytes(need) +
                      " of address space, and the address-space limit "
                      "(RLIMIT_AS, ulimit -v) leaves " +
                      mebibytes(lim.address_space) + " (lower link_capacity" +
                      (threaded ? "" : " or stack_bytes") + ", or raise the limit)");
    if (why.empty()) return "";
    std::string out = "machine: cannot start a " + std::to_string(c.dim) + "-cube here: ";
    for (std::size_t i = 0; i < why.size(); ++i)
        out += (i ? "; " : "") + why[i];
    return out + "; or use a smaller dimension";
}

executor_footprint footprint_of(const config& c, const os_limits& lim) {
    const std::uint64_t p = std::uint64_t{1} << c.dim;
    const auto [thread_stack, thread_guard] = default_thread_stack();
    executor_footprint f;
    f.thread_stack = thread_stack + thread_guard;
    f.touched = p * executor_policy_of(resolve_executor(c.executor)).touched_per_node;
    if (executor_policy_of(resolve_executor(c.executor)).thread_per_node) {
        f.stack = thread_stack;
        f.guard = thread_guard;
        f.reserved = p * f.thread_stack;
        f.mappings = 2 * p;
        f.guarded = p;
        return f;
    }
    const std::uint64_t stride = detail::fiber_stack_stride(c.stack_bytes);
    const auto cpus = std::uint64_t(detail::usable_cpus().size());
    f.stack = c.stack_bytes;
    f.guard = stride - c.stack_bytes;
    f.workers = int(std::min<std::uint64_t>(c.workers ? std::uint64_t(c.workers) : cpus, p));
    f.guarded = std::uint64_t(detail::fiber_guard_pages(int(p), lim));
    f.reserved = p * stride + std::uint64_t(f.workers) * f.thread_stack;
    f.mappings = 1 + 2 * f.guarded + 2 * std::uint64_t(f.workers);
    return f;
}

machine_memory memory_estimate(const config& c) {
    machine_memory m;
    m.nodes = std::uint64_t{1} << c.dim;
    m.links = m.nodes * std::uint64_t(c.dim);
    m.link_bytes = m.links * link_touched_bytes;
    m.per_node = executor_policy_of(resolve_executor(c.executor)).touched_per_node;
    m.node_bytes = m.nodes * m.per_node;
    return m;
}

int largest_dim_within(config c, executor_kind e, const os_limits& lim) {
    c.executor = e;
    c.dim = max_dim_of(e);
    while (c.dim > 0 && !os_limit_problems(c, lim).empty())
        --c.dim;
    return c.dim;
}

} // namespace hcube
