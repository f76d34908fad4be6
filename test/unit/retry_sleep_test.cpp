// SPDX-License-Identifier: BSL-1.0
// The sleep between an acquisition's rounds (retry_sleep): whatever ends a sleep (its timer, a
// sooner end, an end here), what follows it runs once, or not at all when the caller goes on
// itself. The sleeps that matter are an hour long and ended early: nothing waits on a clock.
#include "lock/acquire/retry_sleep.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/strand.hpp>
#include <boost/test/unit_test.hpp>

#include <chrono>

using namespace std::chrono_literals;
using redlock::detail::retry_sleep;
namespace asio = boost::asio;

namespace {

struct fixture {
    asio::io_context io;
    asio::strand<asio::any_io_executor> strand{asio::make_strand(asio::any_io_executor(io.get_executor()))};
    retry_sleep sleep{strand};
    int woken = 0;

    auto count_wake() {
        return [this] { ++woken; };
    }
    void run() { io.run_for(10s); }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(retry_sleep_test)

BOOST_FIXTURE_TEST_CASE(a_sooner_end_replaces_the_sleep_and_what_follows_runs_once, fixture) {
    sleep.sleep_for(1h, count_wake());
    BOOST_TEST(sleep.sleeping());
    sleep.end_by(retry_sleep::clock::now(), count_wake());
    run();
    BOOST_TEST(woken == 1);
    BOOST_TEST(!sleep.sleeping());
}

BOOST_FIXTURE_TEST_CASE(a_later_end_does_not_move_the_sleep, fixture) {
    sleep.sleep_for(0ms, count_wake());
    sleep.end_by(retry_sleep::clock::now() + 1h, count_wake());
    run();
    BOOST_TEST(woken == 1);
    BOOST_TEST(io.stopped());  // ran out of work: nothing left sleeping for the hour
}

BOOST_FIXTURE_TEST_CASE(ended_here_nothing_follows_from_the_timer, fixture) {
    sleep.sleep_for(1h, count_wake());
    sleep.end_now();
    BOOST_TEST(!sleep.sleeping());
    run();
    BOOST_TEST(woken == 0);
    BOOST_TEST(io.stopped());
}

BOOST_FIXTURE_TEST_CASE(not_sleeping_an_end_does_nothing, fixture) {
    sleep.end_by(retry_sleep::clock::now(), count_wake());
    run();
    BOOST_TEST(woken == 0);
    BOOST_TEST(!sleep.sleeping());
}

BOOST_AUTO_TEST_SUITE_END()
