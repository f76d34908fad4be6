// SPDX-License-Identifier: BSL-1.0
// The lease's lifecycle (lease_lifecycle.hpp and lease_fsm::leave): phases, events and the
// actions each asks for, in the orders that race in practice. No server, no strand.
#include "lock/lease/lease_lifecycle.hpp"

#include "lock/lease/lease_fsm.hpp"
#include <redlock/error.hpp>

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <thread>

using redlock::error;
using redlock::detail::lease_event;
using redlock::detail::lease_fsm;
using redlock::detail::lease_phase;
using redlock::detail::on_lease_event;

namespace {

constexpr lease_event all_events[] = {
    lease_event::release_called,   lease_event::dropped,         lease_event::extend_confirmed,
    lease_event::extend_denied,    lease_event::extend_too_late, lease_event::validity_passed,
    lease_event::max_hold_reached, lease_event::client_closed,   lease_event::adopted,
};

}  // namespace

BOOST_AUTO_TEST_SUITE(lease_lifecycle_test)

BOOST_AUTO_TEST_CASE(a_held_lease_is_released_by_its_holder_and_lost_by_everything_else_that_ends_it) {
    const auto release = on_lease_event(lease_phase::held, lease_event::release_called);
    BOOST_TEST((release.next == lease_phase::released));
    BOOST_TEST(release.send_release);
    BOOST_TEST(release.end);
    BOOST_TEST(!release.reason);  // waiters hear it was not lost
    const auto drop = on_lease_event(lease_phase::held, lease_event::dropped);
    BOOST_TEST((drop.next == lease_phase::released));
    BOOST_TEST(drop.send_release);
    BOOST_TEST(!drop.reason);
    for (auto e : {lease_event::extend_denied, lease_event::extend_too_late, lease_event::validity_passed,
                   lease_event::max_hold_reached}) {
        const auto lost = on_lease_event(lease_phase::held, e);
        BOOST_TEST((lost.next == lease_phase::lost));
        BOOST_TEST(lost.send_release);  // nobody waits for a lease given up
        BOOST_TEST(lost.end);
        BOOST_TEST((lost.reason == error::lock_lost));
    }
    // Closed with a client that keeps its leases: ended here, left on the servers to its ttl.
    const auto closed = on_lease_event(lease_phase::held, lease_event::client_closed);
    BOOST_TEST((closed.next == lease_phase::released));
    BOOST_TEST(!closed.send_release);
    BOOST_TEST(closed.end);
    BOOST_TEST((closed.reason == error::client_closed));
    // Handed over and adopted elsewhere: the adopter's token holds, nothing of ours to release.
    const auto adopted = on_lease_event(lease_phase::held, lease_event::adopted);
    BOOST_TEST((adopted.next == lease_phase::released));
    BOOST_TEST(!adopted.send_release);
    BOOST_TEST(adopted.end);
    BOOST_TEST((adopted.reason == error::handed_over));
    const auto extended = on_lease_event(lease_phase::held, lease_event::extend_confirmed);
    BOOST_TEST((extended.next == lease_phase::held));
    BOOST_TEST(extended.move_valid_until);
    BOOST_TEST(!extended.send_release);
    BOOST_TEST(!extended.end);
}

BOOST_AUTO_TEST_CASE(a_lease_that_is_no_longer_held_does_nothing_more) {
    for (auto phase : {lease_phase::released, lease_phase::lost}) {
        for (auto e : all_events) {
            const auto a = on_lease_event(phase, e);
            BOOST_TEST((a.next == phase));
            BOOST_TEST(!a.send_release);
            BOOST_TEST(!a.end);
            BOOST_TEST(!a.move_valid_until);
        }
    }
}

BOOST_AUTO_TEST_CASE(release_while_an_extend_is_in_flight_the_extend_moves_nothing) {
    lease_fsm s;
    BOOST_TEST(s.leave(lease_event::release_called).end);
    BOOST_TEST(!s.held());
    // The extend's quorum arrives after the release went out: the validity stays, the lease
    // stays released (the extend tells its caller lock_lost).
    BOOST_TEST(!s.leave(lease_event::extend_confirmed).move_valid_until);
    BOOST_TEST((s.phase() == lease_phase::released));
}

BOOST_AUTO_TEST_CASE(a_loss_during_a_release_ends_nothing_twice) {
    lease_fsm s;
    BOOST_TEST(s.leave(lease_event::release_called).end);
    const auto late = s.leave(lease_event::validity_passed);
    BOOST_TEST(!late.end);
    BOOST_TEST(!late.send_release);
    BOOST_TEST((s.phase() == lease_phase::released));  // waiters heard "released", not lost
}

BOOST_AUTO_TEST_CASE(a_drop_while_the_watchdog_is_pending_stops_it_and_its_renewal_does_nothing) {
    lease_fsm s;
    const auto drop = s.leave(lease_event::dropped);
    BOOST_TEST(drop.end);  // the end stops the watchdog
    BOOST_TEST(drop.send_release);
    BOOST_TEST(!s.leave(lease_event::extend_confirmed).move_valid_until);
    BOOST_TEST(!s.leave(lease_event::max_hold_reached).end);
}

BOOST_AUTO_TEST_CASE(max_hold_loses_a_lease_its_watchdog_kept_alive) {
    lease_fsm s;
    BOOST_TEST(s.leave(lease_event::extend_confirmed).move_valid_until);
    BOOST_TEST(s.leave(lease_event::extend_confirmed).move_valid_until);
    const auto cap = s.leave(lease_event::max_hold_reached);
    BOOST_TEST(cap.send_release);
    BOOST_TEST((cap.reason == error::lock_lost));
    BOOST_TEST((s.phase() == lease_phase::lost));
    BOOST_TEST(!s.leave(lease_event::release_called).end);  // a release now is refused: not_owner
}

BOOST_AUTO_TEST_CASE(of_events_racing_on_two_threads_exactly_one_ends_the_lease) {
    for (int round = 0; round < 500; ++round) {
        lease_fsm s;
        std::atomic<int> ended{0};
        std::atomic<bool> go{false};
        auto racer = [&](lease_event e) {
            while (!go.load()) {
            }
            if (s.leave(e).end) ended.fetch_add(1);
        };
        std::thread a(racer, lease_event::dropped);
        std::thread b(racer, round % 2 == 0 ? lease_event::validity_passed : lease_event::release_called);
        go.store(true);
        a.join();
        b.join();
        BOOST_TEST(ended.load() == 1);
        BOOST_TEST(!s.held());
    }
}

BOOST_AUTO_TEST_SUITE_END()
