// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_TEST_SUPPORT_SANITIZER_HPP
#define REDLOCK_TEST_SUPPORT_SANITIZER_HPP

namespace redlock::test {

// scripts/test --sanitize (unoptimised) and --tsan build instrumented code that runs several
// times slower: load tests scale their counts down by this, their checks stay the same.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool under_sanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr bool under_sanitizer = true;
#else
inline constexpr bool under_sanitizer = false;
#endif
#else
inline constexpr bool under_sanitizer = false;
#endif

}  // namespace redlock::test

#endif
