// SPDX-License-Identifier: BSL-1.0
// The watchdog's decisions without its timer (watchdog_schedule): when it renews, how it retries,
// when it gives the lease up and when it stops. No server, no clock: times are written out.
#include "lock/lease/watchdog_schedule.hpp"

#include <redlock/error.hpp>

#include <boost/asio/error.hpp>
#include <boost/test/unit_test.hpp>

using namespace std::chrono_literals;
using redlock::error;
using redlock::detail::watchdog_schedule;
using clock_type = watchdog_schedule::clock;

namespace {

const clock_type::time_point t0 = clock_type::time_point{} + 1000h;

}  // namespace

BOOST_AUTO_TEST_SUITE(watchdog_schedule_test)

BOOST_AUTO_TEST_CASE(it_renews_every_third_of_the_ttl_or_as_often_as_asked) {
    const watchdog_schedule by_ttl(3000ms, 0ms, 0ms, 100ms, t0);
    BOOST_TEST(by_ttl.every().count() == 1000);
    BOOST_TEST(by_ttl.ttl().count() == 3000);
    BOOST_TEST((by_ttl.first_tick(t0 + 5ms) == t0 + 1005ms));
    BOOST_TEST((by_ttl.on_tick(t0 + 1005ms) == watchdog_schedule::tick::renew));
    BOOST_TEST((by_ttl.after_extend({}, t0 + 1010ms) == t0 + 2010ms));

    const watchdog_schedule asked(3000ms, 250ms, 0ms, 100ms, t0);
    BOOST_TEST(asked.every().count() == 250);
    // A ttl of 2 ms renews every millisecond, never in a loop without a pause.
    BOOST_TEST(watchdog_schedule(2ms, 0ms, 0ms, 1ms, t0).every().count() == 1);
}

BOOST_AUTO_TEST_CASE(a_failed_extend_is_tried_again_after_about_a_node_timeout) {
    const watchdog_schedule s(3000ms, 0ms, 0ms, 100ms, t0);
    for (const boost::system::error_code ec :
         {boost::system::error_code(error::quorum_unreachable),
          boost::system::error_code(error::request_timeout),
          boost::system::error_code(boost::asio::error::connection_reset)}) {
        BOOST_TEST((s.after_extend(ec, t0 + 1s) == t0 + 1100ms), ec.message());
    }
    // Never sooner than 5 ms, never later than the period.
    BOOST_TEST((watchdog_schedule(3000ms, 0ms, 0ms, 1ms, t0).after_extend(error::quorum_unreachable, t0) ==
                t0 + 5ms));
    BOOST_TEST((watchdog_schedule(3000ms, 0ms, 0ms, 5s, t0).after_extend(error::quorum_unreachable, t0) ==
                t0 + 1000ms));
}

BOOST_AUTO_TEST_CASE(an_extend_that_ended_the_lease_stops_it) {
    const watchdog_schedule s(3000ms, 0ms, 0ms, 100ms, t0);
    for (const auto e : {error::not_owner, error::lock_lost, error::handed_over})
        BOOST_TEST(!s.after_extend(e, t0 + 1s).has_value(), boost::system::error_code(e).message());
}

BOOST_AUTO_TEST_CASE(max_hold_caps_every_tick_and_then_gives_the_lease_up) {
    const watchdog_schedule s(3000ms, 0ms, 2500ms, 100ms, t0);
    BOOST_TEST((s.first_tick(t0) == t0 + 1000ms));
    BOOST_TEST((s.after_extend({}, t0 + 1000ms) == t0 + 2000ms));
    // The next period would pass max_hold: the tick comes at max_hold, which gives it up.
    BOOST_TEST((s.after_extend({}, t0 + 2000ms) == t0 + 2500ms));
    BOOST_TEST((s.after_extend(error::quorum_unreachable, t0 + 2450ms) == t0 + 2500ms));
    BOOST_TEST((s.on_tick(t0 + 2499ms) == watchdog_schedule::tick::renew));
    BOOST_TEST((s.on_tick(t0 + 2500ms) == watchdog_schedule::tick::give_up));
    // Without max_hold, never.
    BOOST_TEST((watchdog_schedule(3000ms, 0ms, 0ms, 100ms, t0).on_tick(t0 + 1000h) ==
                watchdog_schedule::tick::renew));
}

BOOST_AUTO_TEST_SUITE_END()
