// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_LOCK_CLIENT_SUSPENSION_HPP
#define REDLOCK_LOCK_CLIENT_SUSPENSION_HPP

#include <chrono>

namespace redlock::detail {

/// How long this machine has been suspended since it booted: CLOCK_BOOTTIME, which counts a
/// suspension, less CLOCK_MONOTONIC (std::chrono::steady_clock, and Asio's timers), which does
/// not. Two readings apart tell how long the machine slept between them, while the servers'
/// clocks, and the ttls on them, ran on. Zero where there is no CLOCK_BOOTTIME.
[[nodiscard]] std::chrono::nanoseconds suspended_so_far() noexcept;

/// A validity counted on the steady clock from a moment when suspended_so_far() was `then`,
/// read when it is `now`: `valid_until` less the time slept since (less than a millisecond of
/// it is the two clocks' reading jitter, not a suspension).
[[nodiscard]] constexpr std::chrono::steady_clock::time_point less_suspension(
    std::chrono::steady_clock::time_point valid_until, std::chrono::nanoseconds then,
    std::chrono::nanoseconds now) noexcept {
    const auto slept = now - then;
    if (slept < std::chrono::milliseconds(1)) return valid_until;
    return valid_until - std::chrono::duration_cast<std::chrono::steady_clock::duration>(slept);
}

}  // namespace redlock::detail

#endif
