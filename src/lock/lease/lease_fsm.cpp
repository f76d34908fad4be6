// SPDX-License-Identifier: BSL-1.0
#include "lock/lease/lease_fsm.hpp"

#include "lock/client/suspension.hpp"
#include <redlock/error.hpp>

#include <algorithm>
#include <charconv>

namespace redlock::detail {

using boost::system::error_code;
using std::chrono::milliseconds;

lease_input lease_input::started(std::optional<watchdog_schedule> schedule, milliseconds extend_now_to) {
    lease_input in;
    in.what = type::start;
    in.schedule = schedule;
    in.ttl = extend_now_to;
    return in;
}

lease_input lease_input::fired(type timer, std::uint64_t id) {
    lease_input in;
    in.what = timer;
    in.id = id;
    return in;
}

lease_input lease_input::extend(std::uint64_t id, milliseconds ttl) {
    lease_input in;
    in.what = type::extend_requested;
    in.id = id;
    in.ttl = ttl;
    return in;
}

lease_input lease_input::decided(std::uint64_t id, round_state outcome, unsigned granted, error_code cause) {
    lease_input in;
    in.what = type::extend_decided;
    in.id = id;
    in.outcome = outcome;
    in.granted = granted;
    in.cause = cause;
    return in;
}

lease_input lease_input::abandoned(std::uint64_t id) {
    lease_input in;
    in.what = type::extend_abandoned;
    in.id = id;
    return in;
}

lease_input lease_input::ended_by(lease_event event) {
    lease_input in;
    in.what = type::ended;
    in.event = event;
    return in;
}

lease_input lease_input::waiting() {
    lease_input in;
    in.what = type::wait_lost;
    return in;
}

lease_actions lease_fsm::leave(lease_event event) noexcept {
    auto current = phase_.load(std::memory_order_acquire);
    for (;;) {
        auto actions = on_lease_event(current, event);
        if (actions.next == current) return actions;
        if (phase_.compare_exchange_weak(current, actions.next, std::memory_order_acq_rel)) return actions;
    }
}

lease_fsm::clock::time_point lease_fsm::valid_until(std::chrono::nanoseconds suspended_now) const noexcept {
    const auto t = clock::time_point(clock::duration(valid_until_.load(std::memory_order_acquire)));
    return less_suspension(t, std::chrono::nanoseconds(suspended_before_.load(std::memory_order_acquire)),
                           suspended_now);
}

void lease_fsm::set_valid_until(clock::time_point t, std::chrono::nanoseconds suspended_at_start) noexcept {
    suspended_before_.store(suspended_at_start.count(), std::memory_order_release);
    valid_until_.store(t.time_since_epoch().count(), std::memory_order_release);
}

lease_fsm::clock::time_point lease_fsm::at() {
    if (!now_) now_ = time_->now();
    return *now_;
}

std::chrono::nanoseconds lease_fsm::slept() {
    if (!suspended_) suspended_ = time_->suspended();
    return *suspended_;
}

const lease_fsm::steps& lease_fsm::resume(const lease_input& in, const lease_clock& time) {
    out_.clear();
    time_ = &time;
    now_.reset();
    suspended_.reset();
    using type = lease_input::type;
    switch (in.what) {
        case type::start:
            if (in.schedule && !ended_) {
                schedule_ = in.schedule;
                count(lease_count::watchdog_started);
                arm(lease_step::type::arm_validity, valid_until(slept()));
                arm(lease_step::type::arm_tick, schedule_->first_tick(at()));
            }
            if (in.ttl > milliseconds::zero()) begin_extend(next_extend_id(), in.ttl, false);
            break;
        case type::tick:
            if (ended_ || in.id != ticks_armed_ || !schedule_) break;
            if (schedule_->on_tick(at()) == watchdog_schedule::tick::give_up) {
                give_up(lease_event::max_hold_reached);
                break;
            }
            begin_extend(next_extend_id(), schedule_->ttl(), true);
            break;
        case type::validity_due:
            if (ended_ || in.id != validity_armed_) break;
            // Extended meanwhile: watch the new deadline. Else no quorum confirmed an extension in
            // time: our keys may have expired on a majority, so somebody else may hold it now.
            if (at() < valid_until(slept())) {
                arm(lease_step::type::arm_validity, valid_until(slept()));
            } else {
                give_up(lease_event::validity_passed);
            }
            break;
        case type::extend_requested:
            begin_extend(in.id, in.ttl, false);
            break;
        case type::extend_decided:
            on_decided(in);
            break;
        case type::extend_abandoned:
            open_.erase(std::remove_if(open_.begin(), open_.end(),
                                       [&](const open_extend& x) { return x.id == in.id; }),
                        open_.end());
            break;
        case type::ended:
            end(in.event);
            break;
        case type::wait_lost:
            if (!ended_) arm(lease_step::type::arm_validity, valid_until(slept()));
            break;
    }
    return out_;
}

void lease_fsm::begin_extend(std::uint64_t id, milliseconds ttl, bool by_watchdog) {
    open_extend x{id, ttl, at(), valid_until(slept()), slept(), by_watchdog};
    if (!held()) {
        finish(x, error::not_owner, "the lease is no longer held");
        return;
    }
    if (at() >= x.valid_until_before) {
        lose(x, lease_event::extend_too_late, error::lock_lost, "the validity had already run out");
        return;
    }
    open_.push_back(x);
    auto& s = push(lease_step::type::send_extend);
    s.id = id;
    s.ttl = ttl;
}

void lease_fsm::on_decided(const lease_input& in) {
    const auto it =
        std::find_if(open_.begin(), open_.end(), [&](const open_extend& x) { return x.id == in.id; });
    if (it == open_.end()) return;  // abandoned by its caller
    const open_extend x = *it;
    open_.erase(it);
    switch (in.outcome) {
        case round_state::won: {
            const auto left = validity_left(x.ttl, at() - x.started, drift_factor_);
            if (at() < x.valid_until_before && left > clock::duration::zero() &&
                leave(lease_event::extend_confirmed).move_valid_until) {
                set_valid_until(at() + left, x.suspended_at_start);
                set_nodes_granted(in.granted);
                count(lease_count::extended);
                char digits[24];
                const auto* digits_end = std::to_chars(digits, digits + sizeof digits,
                                                       std::chrono::duration_cast<milliseconds>(left).count())
                                             .ptr;
                text_.assign("extended, validity left ")
                    .append(digits, static_cast<std::size_t>(digits_end - digits))
                    .append(" ms");
                finish(x, {}, text_);
            } else {
                lose(x, lease_event::extend_too_late, error::lock_lost,
                     "the quorum came after the validity ran out");
            }
            return;
        }
        case round_state::denied:
            if (handover_written()) {
                give_up(lease_event::adopted);
                finish(x, error::handed_over, "handed over: a majority of nodes hold the adopter's token");
                return;
            }
            lose(x, lease_event::extend_denied, error::not_owner,
                 "a majority of nodes no longer hold our token");
            return;
        case round_state::unreachable:
        case round_state::pending:
            if (at() >= x.valid_until_before) {
                lose(x, lease_event::extend_too_late, error::lock_lost,
                     "too many nodes failed before the validity ran out");
                return;
            }
            {
                // The lease keeps the validity it had: another try may still come before it ends.
                count(lease_count::extend_failed);
                const auto* why = "too many nodes failed; the lease keeps its old validity";
                auto& s = push(lease_step::type::extend_failed);
                s.ec = in.cause;
                s.text = why;
                finish(x, in.cause, why);
            }
            return;
    }
}

void lease_fsm::lose(const open_extend& x, lease_event event, error_code ec, std::string_view why) {
    count(lease_count::extend_failed);
    give_up(event);
    finish(x, ec, why);
}

void lease_fsm::give_up(lease_event event) {
    if (leave(event).end) end(event);
}

void lease_fsm::end(lease_event event) {
    if (ended_) return;
    ended_ = true;
    const auto actions = on_lease_event(lease_phase::held, event);
    end_reason_ = actions.reason;
    if (actions.send_release) {
        // Our keys may be gone from a majority, so somebody else may hold the resource now:
        // delete our token wherever it still is, so nobody waits for a lease given up.
        push(lease_step::type::send_release).answered = event == lease_event::release_called;
    }
    auto& s = push(lease_step::type::end);
    s.ec = end_reason_;
    s.text = describe(event);
    s.watchdog_ran = schedule_.has_value();
}

void lease_fsm::finish(const open_extend& x, error_code ec, std::string_view text) {
    auto& s = push(lease_step::type::finish_extend);
    s.id = x.id;
    s.ec = ec;
    s.text = text;
    if (x.by_watchdog) after_watchdog_extend(ec);
}

void lease_fsm::after_watchdog_extend(error_code ec) {
    if (ended_ || !schedule_) return;
    if (!ec) count(lease_count::watchdog_renewal);
    // None: the extend ended the lease.
    if (const auto next = schedule_->after_extend(ec, at())) arm(lease_step::type::arm_tick, *next);
}

void lease_fsm::arm(lease_step::type timer, clock::time_point at) {
    auto& s = push(timer);
    s.id = timer == lease_step::type::arm_tick ? ++ticks_armed_ : ++validity_armed_;
    s.at = at;
}

void lease_fsm::count(lease_count what) {
    push(lease_step::type::count).counted = what;
}

lease_step& lease_fsm::push(lease_step::type what) {
    auto& s = out_.emplace_back();
    s.what = what;
    return s;
}

}  // namespace redlock::detail
