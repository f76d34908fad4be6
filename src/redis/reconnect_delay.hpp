// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_REDIS_RECONNECT_DELAY_HPP
#define REDLOCK_REDIS_RECONNECT_DELAY_HPP

#include <algorithm>
#include <chrono>
#include <random>

namespace redlock::redis::detail {

/// The pause before reconnect attempt number `failures` (1 for the first): it doubles from
/// `min_delay` up to `max_delay` (at least 1 ms; a max below the min is the min), with jitter in
/// [delay/2, delay] that keeps many clients from reconnecting in lockstep.
template <class Rng>
std::chrono::milliseconds reconnect_delay(std::chrono::milliseconds min_delay,
                                          std::chrono::milliseconds max_delay, unsigned failures, Rng& rng) {
    const auto min = std::max<std::chrono::milliseconds::rep>(min_delay.count(), 1);
    const auto max = std::max<std::chrono::milliseconds::rep>(max_delay.count(), min);
    auto delay = min;
    for (unsigned i = 1; i < failures && delay < max; ++i)
        delay *= 2;
    delay = std::min(delay, max);
    std::uniform_int_distribution<std::chrono::milliseconds::rep> pick(delay / 2, delay);
    return std::chrono::milliseconds(pick(rng));
}

}  // namespace redlock::redis::detail

#endif
