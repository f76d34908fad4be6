// SPDX-License-Identifier: BSL-1.0
// Drives a lease's machine (lease_fsm) with scripted inputs and a fake clock, and records what
// it asks for: the executor of lease_runner.cpp without its rounds and timers.
#ifndef REDLOCK_TEST_UNIT_LEASE_DRIVER_HPP
#define REDLOCK_TEST_UNIT_LEASE_DRIVER_HPP

#include "lock/lease/lease_fsm.hpp"
#include <redlock/error.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace redlock::test {

/// The driver's clock as the machine reads it; nothing is ever suspended here.
class fake_lease_time final : public detail::lease_clock {
public:
    explicit fake_lease_time(const std::chrono::steady_clock::time_point& now) noexcept : now_(now) {}
    [[nodiscard]] std::chrono::steady_clock::time_point now() const noexcept override { return now_; }
    [[nodiscard]] std::chrono::nanoseconds suspended() const noexcept override { return {}; }

private:
    const std::chrono::steady_clock::time_point& now_;
};

class lease_driver {
public:
    using clock = std::chrono::steady_clock;
    using milliseconds = std::chrono::milliseconds;
    using input = detail::lease_input;
    using step = detail::lease_step;

    static constexpr double drift = 0.01;

    /// A lease of `ttl` granted now, valid as a round that took no time makes it; with a watchdog
    /// (renewing every ttl / 3, capped by `max_hold` when not zero) unless `watchdog` is false.
    explicit lease_driver(milliseconds ttl, bool watchdog = true,
                          milliseconds max_hold = milliseconds::zero(), bool extend_now = false)
        : fsm(drift) {
        fsm.set_valid_until(now + detail::validity_left(ttl, {}, drift), {});
        std::optional<detail::watchdog_schedule> schedule;
        if (watchdog) schedule.emplace(ttl, milliseconds::zero(), max_hold, milliseconds(50), now);
        feed(input::started(schedule, extend_now ? ttl : milliseconds::zero()));
    }

    /// Resumes the machine with `in` at the driver's `now`; records and returns its steps.
    const detail::lease_fsm::steps& feed(const input& in) {
        const auto& steps = fsm.resume(in, time_);
        for (const auto& s : steps)
            record(s);
        return steps;
    }

    /// The watchdog's timer fires at its time (the clock moves there if it is behind).
    const detail::lease_fsm::steps& fire_tick() {
        now = std::max(now, tick_at);
        return feed(input::fired(input::type::tick, tick_id));
    }
    const detail::lease_fsm::steps& fire_validity() {
        now = std::max(now, validity_at);
        return feed(input::fired(input::type::validity_due, validity_id));
    }
    /// The caller's lease::async_extend.
    std::uint64_t request_extend(milliseconds ttl) {
        const auto id = fsm.next_extend_id();
        requested.insert(id);
        feed(input::extend(id, ttl));
        return id;
    }
    /// Extend `id`'s round decided `outcome`, `after` its start.
    const detail::lease_fsm::steps& answer(std::uint64_t id, detail::round_state outcome,
                                           milliseconds after = milliseconds(1)) {
        now += after;
        in_flight.erase(id);
        // What a round's report gives as the cause of an unreachable quorum.
        const boost::system::error_code cause = outcome == detail::round_state::unreachable
                                                    ? make_error_code(error::request_timeout)
                                                    : boost::system::error_code();
        return feed(input::decided(id, outcome, 1, cause));
    }
    /// `event` moves the lease out of held, as lease.cpp or client_close.cpp do; when it did, its
    /// end is fed. Returns whether it moved it.
    bool leave(detail::lease_event event) {
        if (!fsm.leave(event).end) return false;
        feed(input::ended_by(event));
        return true;
    }

    detail::lease_fsm fsm;
    clock::time_point now = clock::time_point(std::chrono::hours(1));
    fake_lease_time time_{now};

    // What the machine asked for.
    std::vector<step> log;
    int ends = 0;
    boost::system::error_code end_reason;
    int releases = 0;
    int answered_releases = 0;
    std::set<std::uint64_t> in_flight;  ///< extends sent and not answered yet
    std::set<std::uint64_t> requested;  ///< the caller's extends
    std::map<std::uint64_t, int> finishes;
    std::map<std::uint64_t, boost::system::error_code> finished_with;
    std::map<std::uint64_t, std::string> finished_text;
    int sent_after_end = 0;   ///< extends sent or timers armed once the lease ended
    int steps_after_end = 0;  ///< anything but finishing an extend once the lease ended
    std::uint64_t tick_id = 0;
    std::uint64_t validity_id = 0;
    clock::time_point tick_at{};
    clock::time_point validity_at{};

private:
    void record(const step& s) {
        log.push_back(s);
        if (ends > 0 && s.what != step::type::finish_extend) ++steps_after_end;
        switch (s.what) {
            case step::type::send_extend:
                in_flight.insert(s.id);
                if (ends > 0) ++sent_after_end;
                return;
            case step::type::send_release:
                ++releases;
                if (s.answered) ++answered_releases;
                return;
            case step::type::arm_tick:
                tick_id = s.id;
                tick_at = s.at;
                if (ends > 0) ++sent_after_end;
                return;
            case step::type::arm_validity:
                validity_id = s.id;
                validity_at = s.at;
                if (ends > 0) ++sent_after_end;
                return;
            case step::type::finish_extend:
                ++finishes[s.id];
                finished_with[s.id] = s.ec;
                finished_text[s.id] = std::string(s.text);
                return;
            case step::type::end:
                ++ends;
                end_reason = s.ec;
                return;
            case step::type::count:
            case step::type::extend_failed:
                return;
        }
    }
};

/// How many steps of `type` `steps` holds.
inline int count_of(const detail::lease_fsm::steps& steps, detail::lease_step::type type) {
    int n = 0;
    for (const auto& s : steps)
        n += s.what == type ? 1 : 0;
    return n;
}

}  // namespace redlock::test

#endif
