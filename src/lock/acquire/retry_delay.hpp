// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_LOCK_ACQUIRE_RETRY_DELAY_HPP
#define REDLOCK_LOCK_ACQUIRE_RETRY_DELAY_HPP

#include <redlock/config.hpp>

#include <chrono>
#include <random>

namespace redlock::detail {

/// The pause before the next acquire attempt: uniform in [min_delay, max_delay], so that
/// contenders that failed together do not retry together; never beyond what is left of the wait.
template <class Rng>
std::chrono::milliseconds retry_delay(const retry_config& retry, std::chrono::milliseconds wait_left,
                                      Rng& rng) {
    std::uniform_int_distribution<std::chrono::milliseconds::rep> pick(retry.min_delay.count(),
                                                                       retry.max_delay.count());
    std::chrono::milliseconds d{pick(rng)};
    return d < wait_left ? d : wait_left;
}

}  // namespace redlock::detail

#endif
