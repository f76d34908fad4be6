// The write hold (write_hold): a request admitted while replies are owed waits for them while
// they are due soon, and is written at once where they are not (a slow, paused or distant
// server, a lost reply), where pipelining is what hides the wait. Driven by a fake clock.
#include "redis/write_hold.hpp"

#include <boost/test/unit_test.hpp>

#include <chrono>

using namespace std::chrono_literals;
using redlock::redis::detail::write_hold;

namespace {

struct fixture {
    write_hold hold{1ms};
    write_hold::clock_type::time_point now = write_hold::clock_type::time_point{} + 1h;

    // One round trip of `d` on an idle connection: a write, then its answer.
    void round_trip(write_hold::clock_type::duration d) {
        hold.idle_write_started(now);
        now += d;
        hold.bytes_arrived(now);
        now += 10us;
    }
    // Would a request admitted 50 us after the next idle write wait for its replies?
    bool holds_behind_a_fresh_write() {
        hold.idle_write_started(now);
        return hold.holds(true, now + 50us);
    }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(write_hold_test)

BOOST_FIXTURE_TEST_CASE(nothing_owed_is_never_held, fixture) {
    BOOST_TEST(!hold.holds(false, now));
    round_trip(100us);
    hold.idle_write_started(now);
    BOOST_TEST(!hold.holds(false, now));
}

BOOST_FIXTURE_TEST_CASE(short_round_trips_hold_requests_behind_owed_replies, fixture) {
    BOOST_TEST(holds_behind_a_fresh_write());  // before any sample: a new connection is assumed near
    round_trip(200us);
    round_trip(300us);
    BOOST_TEST(holds_behind_a_fresh_write());
    BOOST_TEST(hold.smoothed_round_trip() > 200us);
    BOOST_TEST(hold.smoothed_round_trip() < 300us);
}

BOOST_FIXTURE_TEST_CASE(a_round_trip_that_outlasts_the_limit_ends_the_hold, fixture) {
    round_trip(200us);
    hold.idle_write_started(now);
    BOOST_TEST(hold.holds(true, now + 900us));
    // The reply is late (a paused server) or lost: what comes now, and what was held (the
    // connection asks again when a request times out), goes out at once.
    BOOST_TEST(!hold.holds(true, now + 1100us));
    BOOST_TEST(!hold.holds(true, now + 1h));
}

BOOST_FIXTURE_TEST_CASE(a_distant_server_is_pipelined_from_its_first_round_trip, fixture) {
    round_trip(20ms);
    BOOST_TEST(!holds_behind_a_fresh_write());
    BOOST_TEST((hold.smoothed_round_trip() == 20ms));
}

BOOST_FIXTURE_TEST_CASE(one_slow_answer_does_not_end_the_hold_but_a_slow_link_does, fixture) {
    for (int i = 0; i < 20; ++i)
        round_trip(100us);
    round_trip(3ms);  // one reply behind a slow command
    BOOST_TEST(holds_behind_a_fresh_write());
    int slow = 1;
    while (holds_behind_a_fresh_write() && slow < 50) {
        round_trip(3ms);
        ++slow;
    }
    BOOST_TEST(!holds_behind_a_fresh_write());
    BOOST_TEST(slow > 2);
    BOOST_TEST(slow < 20);
}

BOOST_FIXTURE_TEST_CASE(the_hold_comes_back_when_round_trips_are_short_again, fixture) {
    for (int i = 0; i < 5; ++i)
        round_trip(10ms);
    BOOST_TEST(!holds_behind_a_fresh_write());
    int fast = 0;
    while (!holds_behind_a_fresh_write() && fast < 200) {
        round_trip(100us);
        ++fast;
    }
    BOOST_TEST(holds_behind_a_fresh_write());
    BOOST_TEST(fast < 40);
}

BOOST_FIXTURE_TEST_CASE(only_the_first_bytes_after_an_idle_write_are_a_sample, fixture) {
    round_trip(200us);
    const auto before = hold.smoothed_round_trip();
    // More bytes of the same answer, long after: not a round trip.
    now += 50ms;
    hold.bytes_arrived(now);
    BOOST_TEST((hold.smoothed_round_trip() == before));
    BOOST_TEST(holds_behind_a_fresh_write());
}

BOOST_AUTO_TEST_SUITE_END()
