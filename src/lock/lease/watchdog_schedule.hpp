// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_LOCK_LEASE_WATCHDOG_SCHEDULE_HPP
#define REDLOCK_LOCK_LEASE_WATCHDOG_SCHEDULE_HPP

#include <boost/system/error_code.hpp>

#include <chrono>
#include <optional>

namespace redlock::detail {

/// What a watchdog does and when, without its timer or its extends: the I/O-free half of
/// `watchdog`, which only carries it out. Time comes with each call.
class watchdog_schedule {
public:
    using clock = std::chrono::steady_clock;
    using milliseconds = std::chrono::milliseconds;

    /// For a lease granted at `granted_at` with lock_options' `ttl`, `renew_every` (0: ttl / 3)
    /// and `max_hold` (0: none); `node_timeout` is the lease's per-node timeout.
    watchdog_schedule(milliseconds ttl, milliseconds renew_every, milliseconds max_hold,
                      milliseconds node_timeout, clock::time_point granted_at) noexcept;

    /// What a tick asks for.
    enum class tick { renew, give_up };

    /// The first tick, from the start at `now`.
    [[nodiscard]] clock::time_point first_tick(clock::time_point now) const noexcept;
    /// At a tick: an extend, or, once max_hold is reached, giving the lease up (freed now rather
    /// than left to run out).
    [[nodiscard]] tick on_tick(clock::time_point now) const noexcept;
    /// After the tick's extend ended with `ec`: the next tick, a period later when it was
    /// confirmed, soon when too few nodes answered (another try may still come within the
    /// validity); none when the extend ended the lease (it was not ours any more, lost, or
    /// handed over), which stops the watchdog.
    [[nodiscard]] std::optional<clock::time_point> after_extend(boost::system::error_code ec,
                                                                clock::time_point now) const noexcept;

    /// The extends' ttl, and how often they come.
    [[nodiscard]] milliseconds ttl() const noexcept { return ttl_; }
    [[nodiscard]] milliseconds every() const noexcept { return every_; }

private:
    [[nodiscard]] clock::time_point capped(clock::time_point at) const noexcept;

    milliseconds ttl_;
    milliseconds every_;
    milliseconds retry_;
    clock::time_point hold_until_;
};

}  // namespace redlock::detail

#endif
