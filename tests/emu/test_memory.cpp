// keep_freed_memory (machine.hpp): a buffer freed and allocated again by a
// node thread is not page-faulted in again. Its own executable: the check
// needs a process whose malloc has not adjusted itself to earlier tests.
#include <doctest/doctest.h>

#include <hcube/machine.hpp>

#include <cstdlib>
#include <cstring>
#include <thread>

#include <sys/resource.h>

// ASan's mallopt refuses every setting; TSan's passes it to glibc, whose
// answer keep_freed_memory reports, but its own allocator maps large blocks
// afresh whatever glibc was told.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool mallopt_takes = false, own_malloc = false;
#elif defined(__SANITIZE_THREAD__)
constexpr bool mallopt_takes = true, own_malloc = false;
#else
constexpr bool mallopt_takes = true, own_malloc = true;
#endif

namespace {

volatile char sink;

long minor_faults_of_this_thread() {
    rusage u{};
    getrusage(RUSAGE_THREAD, &u);
    return u.ru_minflt;
}

// Minor page faults of rounds 2..4 of allocating, writing and freeing `bytes`
// in a new thread (round 1 grows its heap: those faults are expected).
long faults_after_first_round(std::size_t bytes) {
    long faults = 0;
    std::thread([&] {
        void* (*volatile allocate)(std::size_t) = std::malloc; // not elided
        for (int round = 1; round <= 4; ++round) {
            if (round == 2) faults = -minor_faults_of_this_thread();
            void* p = allocate(bytes);
            std::memset(p, round, bytes);
            sink = static_cast<volatile char*>(p)[bytes - 1]; // the writes stay
            std::free(p);
        }
        faults += minor_faults_of_this_thread();
    }).join();
    return faults;
}

} // namespace

TEST_CASE("keep_freed_memory: a node thread's freed buffer is reused without page faults") {
    REQUIRE(hcube::keep_freed_memory() == mallopt_takes);
    // 24 MiB, 6144 pages: above glibc's default mmap threshold (128 KiB), so
    // by default round 2 maps it again and faults every page in (6144 here).
    const long faults = faults_after_first_round(24 << 20);
    CHECK(sink == 4); // the last round's write, read back
    INFO("minor faults in rounds 2-4: " << faults);
    if (own_malloc) CHECK(faults < 64);
}
