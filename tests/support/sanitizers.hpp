// How much slower the sanitizer builds run: wall-clock limits and time budgets
// in the tests scale with it (TSan runs threads 5-15x slower, and CI has two
// busy cores).
#pragma once

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define HCUBE_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define HCUBE_TEST_SANITIZED 1
#endif
#endif

#if defined(__SANITIZE_THREAD__)
#define HCUBE_TEST_THREAD_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define HCUBE_TEST_THREAD_SANITIZED 1
#endif
#endif

namespace hcube::test {

// ThreadSanitizer starts no thread in a child forked from a threaded process,
// and reserves more address space than any ulimit -v a test would set.
#ifdef HCUBE_TEST_THREAD_SANITIZED
inline constexpr bool thread_sanitized = true;
#else
inline constexpr bool thread_sanitized = false;
#endif

#ifdef HCUBE_TEST_SANITIZED
inline constexpr bool sanitized = true;
inline constexpr int sanitizer_slowdown = 10;
#else
inline constexpr bool sanitized = false;
inline constexpr int sanitizer_slowdown = 1;
#endif

// The largest dimension of a sweep over d: sanitizer builds stop at 6 (64
// nodes), where every algorithm has taken each kind of step and a race has its
// chance; the sweeps to d = 8 cost 4-5x more under TSan for nothing new, and
// the normal build still runs them.
constexpr int sweep_dim(int d) {
    return sanitized && d > 6 ? 6 : d;
}

} // namespace hcube::test
