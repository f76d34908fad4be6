// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_TEST_SUPPORT_SLOW_LOOKUP_HPP
#define REDLOCK_TEST_SUPPORT_SLOW_LOOKUP_HPP

#include <chrono>
#include <cstddef>

/// A name lookup as slow as a test wants: getaddrinfo() of `host` sleeps for the delay set, then
/// resolves to 127.0.0.1; every other name goes to the C library's. What a slow DNS server looks
/// like to a connection, whose lookup (Asio 1.81) cannot be cancelled once under way. The
/// override lives in slow_lookup.cpp, a source of the integration tests only.
namespace redlock::test::slow_lookup {

inline constexpr const char* host = "slow-lookup.redlock.test";

/// How long each lookup of `host` takes from now on (zero: none).
void set_delay(std::chrono::milliseconds d);
/// Lookups of `host` that have begun / returned so far (a lookup the resolver cancelled before
/// it began is neither).
[[nodiscard]] std::size_t started();
[[nodiscard]] std::size_t finished();

}  // namespace redlock::test::slow_lookup

#endif
