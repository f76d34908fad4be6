// SPDX-License-Identifier: BSL-1.0
// metrics()' hold-time and wait-time histograms on real servers: which holds and which acquires
// they count, and that the durations are the ones the caller saw.
#include "support/lock_helpers.hpp"
#include "support/printing.hpp"
#include "support/redis_server.hpp"
#include "support/run_coro.hpp"
#include <redlock/redlock.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/test/unit_test.hpp>

#include <chrono>

namespace asio = boost::asio;
using namespace std::chrono_literals;
using redlock::test::eventually;
using redlock::test::lock_config;
using redlock::test::options;
using redlock::test::run_coro;
using redlock::test::sleep_for;
using redlock::test::start_redis_servers;

namespace {

constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);
using clock = std::chrono::steady_clock;

std::uint64_t us(clock::duration d) {
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(d).count());
}

// Releases `lease` `delay` after `waiter` has had a round refused (so its acquire began before
// the delay did); a function, not a capturing lambda: the coroutine outlives the co_spawn call.
asio::awaitable<void> release_after_refusal(redlock::lease& lease, const redlock::client& waiter,
                                            std::uint64_t refused_rounds_before,
                                            std::chrono::milliseconds delay) {
    const auto give_up = clock::now() + 10s;
    while (waiter.metrics().contended == refused_rounds_before && clock::now() < give_up)
        co_await sleep_for(1ms);
    co_await sleep_for(delay);
    co_await lease.async_release(asio::use_awaitable);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(metrics_test)

// A hold counts from its grant to its end, whatever ended it: a release, and a drop.
BOOST_AUTO_TEST_CASE(hold_time_counts_every_lease_from_grant_to_end) {
    auto servers = start_redis_servers(1);
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        const auto asked = clock::now();
        auto lease = co_await client.async_acquire("held", options(), asio::use_awaitable);
        co_await sleep_for(150ms);
        co_await lease.async_release(asio::use_awaitable);
        const auto held = us(clock::now() - asked);
        auto m = client.metrics();
        BOOST_TEST(m.hold_time.count == 1u);
        // At least the 150 ms slept; at most what the caller saw from its call to the release's end.
        BOOST_TEST(m.hold_time.sum_us >= 150000u);
        BOOST_TEST(m.hold_time.sum_us <= held);

        { auto dropped = co_await client.async_acquire("dropped", options(), asio::use_awaitable); }
        BOOST_TEST(co_await eventually([&] { return client.metrics().hold_time.count == 2u; }));
        m = client.metrics();
        BOOST_TEST(m.leases_dropped == 1u);
        BOOST_TEST(m.acquire_latency.count == 2u);
        BOOST_TEST(m.wait_time.count == 0u);  // neither acquire waited
    }());
}

// Wait time counts the acquires that waited and found the resource held, granted or not, from
// the call to their end; an acquire granted at once and a try-lock refusal are not in it.
BOOST_AUTO_TEST_CASE(wait_time_counts_the_acquires_that_waited_for_a_holder) {
    auto servers = start_redis_servers(3);
    asio::io_context ioc;
    redlock::client holder(ioc.get_executor(), lock_config(servers));
    redlock::client waiter(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        // Granted at once, though it could have waited.
        auto first = co_await waiter.async_acquire("free", options(10s, 5s), asio::use_awaitable);
        co_await first.async_release(asio::use_awaitable);
        BOOST_TEST(waiter.metrics().wait_time.count == 0u);

        auto held = co_await holder.async_acquire("busy", options(), asio::use_awaitable);
        // A try-lock refused: it did not wait.
        auto [refused, none] = co_await waiter.async_acquire("busy", options(), tuple_awaitable);
        BOOST_TEST(refused == redlock::error::not_acquired);
        BOOST_TEST(waiter.metrics().wait_time.count == 0u);

        // Waits 200 ms and times out.
        auto start = clock::now();
        auto [timed_out, none2] = co_await waiter.async_acquire("busy", options(10s, 200ms), tuple_awaitable);
        auto waited = us(clock::now() - start);
        BOOST_TEST(timed_out == redlock::error::wait_timeout);
        auto m = waiter.metrics();
        BOOST_TEST(m.wait_time.count == 1u);
        BOOST_TEST(m.wait_time.sum_us >= 200000u);
        BOOST_TEST(m.wait_time.sum_us <= waited);

        // Waits for a release 150 ms away and gets it.
        const auto timed_out_sum = m.wait_time.sum_us;
        asio::co_spawn(ioc, release_after_refusal(held, waiter, m.contended, 150ms), asio::detached);
        start = clock::now();
        auto granted = co_await waiter.async_acquire("busy", options(10s, 10s), asio::use_awaitable);
        waited = us(clock::now() - start);
        m = waiter.metrics();
        BOOST_TEST(granted.held());
        BOOST_TEST(m.wait_time.count == 2u);
        // The acquire began before the release's 150 ms did, and ended after the release.
        BOOST_TEST(m.wait_time.sum_us - timed_out_sum >= 150000u);
        BOOST_TEST(m.wait_time.sum_us - timed_out_sum <= waited);
        BOOST_TEST(holder.metrics().wait_time.count == 0u);
        co_await granted.async_release(asio::use_awaitable);
    }());
}

BOOST_AUTO_TEST_SUITE_END()
