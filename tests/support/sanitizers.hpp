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

namespace hcube::test {

#ifdef HCUBE_TEST_SANITIZED
inline constexpr bool sanitized = true;
inline constexpr int sanitizer_slowdown = 10;
#else
inline constexpr bool sanitized = false;
inline constexpr int sanitizer_slowdown = 1;
#endif

} // namespace hcube::test
