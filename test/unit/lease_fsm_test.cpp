// SPDX-License-Identifier: BSL-1.0
// A lease's life as a pure state machine (lease_fsm), driven by scripted inputs and a fake clock
// (lease_driver.hpp): the watchdog's schedule, every outcome of an extend, and each way a lease
// ends, also in the middle of everything else, where it must end once.
#include "lease_driver.hpp"

#include <boost/test/unit_test.hpp>

#include <array>
#include <chrono>
#include <vector>

using namespace std::chrono_literals;
using redlock::error;
using redlock::detail::lease_event;
using redlock::detail::round_state;
using redlock::test::count_of;
using redlock::test::lease_driver;
using step = redlock::detail::lease_step::type;

namespace {

void answer_all(lease_driver& d, round_state outcome) {
    const auto flying = d.in_flight;
    for (auto id : flying)
        d.answer(id, outcome);
}

// A lease's ordinary life, one input per step: renewals, a caller's extend that finds too few
// nodes, a validity timer that finds the lease extended.
constexpr int life_steps = 9;
void live(lease_driver& d, int step_index) {
    switch (step_index) {
        case 0:
            d.fire_tick();
            return;
        case 1:
            answer_all(d, round_state::won);
            return;
        case 2:
            d.request_extend(30s);
            return;
        case 3:
            answer_all(d, round_state::unreachable);
            return;
        case 4:
            d.fire_tick();
            return;
        case 5:
            answer_all(d, round_state::won);
            return;
        case 6:
            d.fire_validity();
            return;
        case 7:
            d.fire_tick();
            return;
        default:
            answer_all(d, round_state::won);
            return;
    }
}

enum class fault { release, drop, close, validity_passes, adopted, denied };
constexpr std::array faults{fault::release,         fault::drop,    fault::close,
                            fault::validity_passes, fault::adopted, fault::denied};

void inject(lease_driver& d, fault f) {
    switch (f) {
        case fault::release:
            d.leave(lease_event::release_called);
            return;
        case fault::drop:
            d.leave(lease_event::dropped);
            return;
        case fault::close:
            d.leave(lease_event::client_closed);
            return;
        case fault::validity_passes:
            d.now = d.fsm.valid_until({}) + 1ms;
            d.fire_validity();
            return;
        case fault::adopted:
        case fault::denied:
            // A majority answers that our token is gone, to an extend of the caller's.
            if (f == fault::adopted) d.fsm.mark_handover_written();
            d.answer(d.request_extend(30s), round_state::denied);
            return;
    }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(lease_fsm_test)

BOOST_AUTO_TEST_CASE(the_watchdog_extends_every_third_of_the_ttl_and_watches_the_validity) {
    lease_driver d(30s);
    const auto granted = d.now;
    BOOST_TEST((d.tick_at == granted + 10s));
    BOOST_TEST((d.validity_at == d.fsm.valid_until({})));
    for (int renewal = 1; renewal <= 3; ++renewal) {
        const auto& sent = d.fire_tick();
        BOOST_TEST_REQUIRE(count_of(sent, step::send_extend) == 1);
        const auto id = sent.front().id;
        const auto& done = d.answer(id, round_state::won, 5ms);
        BOOST_TEST(count_of(done, step::finish_extend) == 1);
        BOOST_TEST(!d.finished_with[id]);
        BOOST_TEST(d.finished_text[id] == "extended, validity left 29693 ms");  // 30 s - 5 ms - 302 ms
        BOOST_TEST((d.tick_at == d.now + 10s));
        // ttl - elapsed - drift from now: the time the extend took counts against it.
        BOOST_TEST(
            (d.fsm.valid_until({}) == d.now + redlock::detail::validity_left(30s, 5ms, lease_driver::drift)));
    }
    // The validity timer armed at the grant finds the lease extended: it watches the new deadline.
    const auto& watch = d.fire_validity();
    BOOST_TEST(count_of(watch, step::arm_validity) == 1);
    BOOST_TEST(d.ends == 0);
    BOOST_TEST(d.fsm.held());
}

BOOST_AUTO_TEST_CASE(an_extend_that_finds_too_few_nodes_keeps_the_validity_and_is_tried_again_soon) {
    lease_driver d(30s);
    const auto id = d.fire_tick().front().id;
    const auto before = d.fsm.valid_until({});
    const auto& failed = d.answer(id, round_state::unreachable, 50ms);
    BOOST_TEST(count_of(failed, step::extend_failed) == 1);
    BOOST_TEST((d.finished_with[id] == error::request_timeout));
    BOOST_TEST((d.fsm.valid_until({}) == before));
    BOOST_TEST((d.tick_at == d.now + 50ms));  // one node timeout later, not a period
    BOOST_TEST(d.fsm.held());
}

BOOST_AUTO_TEST_CASE(no_confirmed_extend_before_the_validity_runs_out_loses_the_lease_and_frees_it) {
    lease_driver d(30s);
    d.now = d.fsm.valid_until({});
    const auto& lost = d.fire_validity();
    BOOST_TEST(count_of(lost, step::send_release) == 1);
    BOOST_TEST(d.ends == 1);
    BOOST_TEST((d.end_reason == error::lock_lost));
    BOOST_TEST(!d.fsm.held());
    BOOST_TEST(d.fire_tick().empty());  // the watchdog has stopped
}

BOOST_AUTO_TEST_CASE(a_quorum_that_comes_after_the_validity_loses_the_lease) {
    lease_driver d(30s);
    const auto id = d.fire_tick().front().id;
    d.answer(id, round_state::won, 25s);  // later than the validity the lease had
    BOOST_TEST((d.finished_with[id] == error::lock_lost));
    BOOST_TEST((d.end_reason == error::lock_lost));
    BOOST_TEST(d.releases == 1);
    // An extend asked for once the validity ran out is too late before it goes out.
    lease_driver late(30s, false);
    late.now += 31s;
    const auto asked = late.request_extend(30s);
    BOOST_TEST(late.in_flight.empty());
    BOOST_TEST((late.finished_with[asked] == error::lock_lost));
    BOOST_TEST(late.ends == 1);
}

BOOST_AUTO_TEST_CASE(a_release_during_an_extend_ends_the_lease_once_and_the_extend_moves_nothing) {
    lease_driver d(30s);
    const auto id = d.fire_tick().front().id;
    BOOST_TEST(d.leave(lease_event::release_called));
    BOOST_TEST(d.answered_releases == 1);  // the caller's round sends it, and hears the answers
    BOOST_TEST(d.ends == 1);
    BOOST_TEST(!d.end_reason);
    const auto before = d.fsm.valid_until({});
    d.answer(id, round_state::won);
    BOOST_TEST((d.fsm.valid_until({}) == before));
    BOOST_TEST(d.finishes[id] == 1);
    BOOST_TEST(d.finished_with[id]);
    BOOST_TEST(d.ends == 1);
    BOOST_TEST(d.sent_after_end == 0);
    BOOST_TEST(d.releases == 1);
}

BOOST_AUTO_TEST_CASE(a_loss_during_a_release_ends_nothing_twice) {
    lease_driver d(30s);
    BOOST_TEST(d.fsm.leave(lease_event::release_called).end);  // on the caller's thread
    // The validity passes before the release reaches the strand: the release already owns the end.
    d.now = d.fsm.valid_until({}) + 1ms;
    BOOST_TEST(d.fire_validity().empty());
    d.feed(redlock::detail::lease_input::ended_by(lease_event::release_called));
    BOOST_TEST(d.ends == 1);
    BOOST_TEST(!d.end_reason);  // the waiters hear "released", not lost
    BOOST_TEST(d.releases == 1);
}

BOOST_AUTO_TEST_CASE(a_drop_while_the_watchdog_waits_frees_the_lease_and_stops_the_watchdog) {
    lease_driver d(30s);
    BOOST_TEST(d.leave(lease_event::dropped));
    BOOST_TEST(d.releases == 1);
    BOOST_TEST(d.answered_releases == 0);  // in the background: nobody waits for it
    BOOST_TEST(d.log.back().watchdog_ran);
    BOOST_TEST(d.fire_tick().empty());
    BOOST_TEST(d.fire_validity().empty());
    BOOST_TEST(d.ends == 1);
    BOOST_TEST(!d.leave(lease_event::release_called));  // a release now is refused
}

BOOST_AUTO_TEST_CASE(a_hand_over_while_renewing_ends_the_lease_as_handed_over_and_releases_nothing) {
    lease_driver d(30s);
    const auto id = d.fire_tick().front().id;
    d.fsm.mark_handover_written();  // lease::handover() on the holder's thread
    d.answer(id, round_state::denied);
    BOOST_TEST((d.finished_with[id] == error::handed_over));
    BOOST_TEST((d.end_reason == error::handed_over));
    BOOST_TEST(d.releases == 0);  // the adopter's token holds now
    // Without a hand-over, the same denial is a loss, and our token is deleted wherever it is.
    lease_driver lost(30s);
    const auto denied = lost.fire_tick().front().id;
    lost.answer(denied, round_state::denied);
    BOOST_TEST((lost.finished_with[denied] == error::not_owner));
    BOOST_TEST((lost.end_reason == error::lock_lost));
    BOOST_TEST(lost.releases == 1);
}

BOOST_AUTO_TEST_CASE(max_hold_gives_up_a_lease_its_watchdog_kept_alive) {
    lease_driver d(30s, true, 25s);
    const auto granted = d.now;
    d.answer(d.fire_tick().front().id, round_state::won);
    d.answer(d.fire_tick().front().id, round_state::won);
    BOOST_TEST((d.tick_at == granted + 25s));  // the tick moves up to max_hold
    const auto& capped = d.fire_tick();
    BOOST_TEST(count_of(capped, step::send_extend) == 0);
    BOOST_TEST(count_of(capped, step::send_release) == 1);
    BOOST_TEST((d.end_reason == error::lock_lost));
}

BOOST_AUTO_TEST_CASE(stale_timers_abandoned_extends_and_closes_do_nothing_more) {
    lease_driver d(30s);
    const auto first_tick = d.tick_id;
    const auto id = d.fire_tick().front().id;
    d.answer(id, round_state::won);
    BOOST_TEST(
        d.feed(redlock::detail::lease_input::fired(redlock::detail::lease_input::type::tick, first_tick))
            .empty());
    const auto asked = d.request_extend(30s);
    d.feed(redlock::detail::lease_input::abandoned(asked));    // its caller cancelled it
    BOOST_TEST(d.answer(asked, round_state::denied).empty());  // its denial counts for nothing now
    BOOST_TEST(d.fsm.held());
    BOOST_TEST(d.leave(lease_event::client_closed));
    BOOST_TEST((d.end_reason == error::client_closed));
    BOOST_TEST(d.releases == 0);  // kept on the servers until its ttl
}

BOOST_AUTO_TEST_CASE(a_hand_off_extends_at_once_and_without_a_watchdog_nothing_is_armed) {
    lease_driver d(30s, false, 0ms, true);
    BOOST_TEST(d.in_flight.size() == 1u);
    BOOST_TEST(d.tick_id == 0u);
    BOOST_TEST(d.validity_id == 0u);
    d.answer(*d.in_flight.begin(), round_state::won);
    BOOST_TEST(d.tick_id == 0u);
    // A lost-waiter asks for the validity to be watched.
    d.feed(redlock::detail::lease_input::waiting());
    BOOST_TEST(d.validity_id == 1u);
}

// Each way a lease ends, after every step of an ordinary life: it ends exactly once, with the
// reason of the way it ended; every extend, the caller's or the watchdog's, finishes exactly once;
// nothing is sent or armed after the end; the release goes out once where the lease is freed
// (answered for the holder's release), never when it is kept (close) or adopted.
BOOST_AUTO_TEST_CASE(a_lease_ends_once_whatever_step_it_ends_at) {
    for (auto f : faults) {
        for (int at = 0; at <= life_steps; ++at) {
            BOOST_TEST_CONTEXT("fault " << static_cast<int>(f) << " after step " << at) {
                lease_driver d(30s);
                for (int k = 0; k < at; ++k)
                    live(d, k);
                inject(d, f);
                // Whatever was in flight comes back, and every timer still armed fires.
                answer_all(d, round_state::won);
                d.fire_tick();
                d.fire_validity();
                answer_all(d, round_state::won);

                BOOST_TEST(d.ends == 1);
                BOOST_TEST(!d.fsm.held());
                BOOST_TEST(d.in_flight.empty());
                BOOST_TEST(d.sent_after_end == 0);
                for (const auto& [id, n] : d.finishes)
                    BOOST_TEST(n == 1, "extend " << id << " finished " << n << " times");
                for (auto id : d.requested)
                    BOOST_TEST(d.finishes[id] == 1);
                switch (f) {
                    case fault::release:
                        BOOST_TEST(!d.end_reason);
                        BOOST_TEST(d.answered_releases == 1);
                        BOOST_TEST(d.releases == 1);
                        break;
                    case fault::drop:
                        BOOST_TEST(!d.end_reason);
                        BOOST_TEST(d.answered_releases == 0);
                        BOOST_TEST(d.releases == 1);
                        break;
                    case fault::close:
                        BOOST_TEST((d.end_reason == error::client_closed));
                        BOOST_TEST(d.releases == 0);
                        break;
                    case fault::adopted:
                        BOOST_TEST((d.end_reason == error::handed_over));
                        BOOST_TEST(d.releases == 0);
                        break;
                    case fault::validity_passes:
                    case fault::denied:
                        BOOST_TEST((d.end_reason == error::lock_lost));
                        BOOST_TEST(d.releases == 1);
                        break;
                }
            }
        }
    }
}

// Without a fault the lease lives on: the script itself ends nothing.
BOOST_AUTO_TEST_CASE(an_ordinary_life_ends_nothing) {
    lease_driver d(30s);
    for (int k = 0; k <= life_steps; ++k)
        live(d, k);
    BOOST_TEST(d.ends == 0);
    BOOST_TEST(d.fsm.held());
    BOOST_TEST(d.finishes.size() >= 4u);
    BOOST_TEST(d.in_flight.empty());
}

BOOST_AUTO_TEST_SUITE_END()
