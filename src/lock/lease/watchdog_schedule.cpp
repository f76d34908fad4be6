// SPDX-License-Identifier: BSL-1.0
#include "lock/lease/watchdog_schedule.hpp"

#include <redlock/error.hpp>

#include <algorithm>

namespace redlock::detail {

watchdog_schedule::watchdog_schedule(milliseconds ttl, milliseconds renew_every, milliseconds max_hold,
                                     milliseconds node_timeout, clock::time_point granted_at) noexcept
    : ttl_(ttl),
      every_(std::max(renew_every > milliseconds::zero() ? renew_every : ttl / 3, milliseconds(1))),
      // A failed extend is tried again after about one node's timeout: sooner would only meet
      // the same unanswering nodes; never later than the period (or 5 ms).
      retry_(std::clamp(node_timeout, milliseconds(5), std::max(every_, milliseconds(5)))),
      hold_until_(max_hold > milliseconds::zero() ? granted_at + max_hold : clock::time_point::max()) {}

watchdog_schedule::clock::time_point watchdog_schedule::capped(clock::time_point at) const noexcept {
    return std::min(at, hold_until_);
}

watchdog_schedule::clock::time_point watchdog_schedule::first_tick(clock::time_point now) const noexcept {
    return capped(now + every_);
}

watchdog_schedule::tick watchdog_schedule::on_tick(clock::time_point now) const noexcept {
    return now >= hold_until_ ? tick::give_up : tick::renew;
}

std::optional<watchdog_schedule::clock::time_point> watchdog_schedule::after_extend(
    boost::system::error_code ec, clock::time_point now) const noexcept {
    if (!ec) return capped(now + every_);
    if (ec == error::not_owner || ec == error::lock_lost || ec == error::handed_over) return std::nullopt;
    return capped(now + retry_);
}

}  // namespace redlock::detail
