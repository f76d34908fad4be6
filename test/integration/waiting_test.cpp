// SPDX-License-Identifier: BSL-1.0
// Waiting acquires (lock_options::wait > 0) woken by release messages, on real servers.
#include "support/lock_helpers.hpp"
#include "support/printing.hpp"
#include "support/redis_server.hpp"
#include "support/run_coro.hpp"
#include "support/tcp_proxy.hpp"
#include <redlock/redlock.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace asio = boost::asio;
namespace data = boost::unit_test::data;
using namespace std::chrono_literals;
using boost::system::error_code;
using redlock::test::eventually;
using redlock::test::held_everywhere;
using redlock::test::lock_config;
using redlock::test::no_key_anywhere;
using redlock::test::options;
using redlock::test::run_coro;
using redlock::test::sleep_for;
using redlock::test::start_redis_servers;
using redlock::test::through;
using clock_type = std::chrono::steady_clock;

namespace {

constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);
const auto node_counts = data::make({1, 5});

// Waiting that leans on release messages: the timed retries are seconds apart.
redlock::lock_options waiting(std::chrono::milliseconds wait, std::chrono::milliseconds ttl = 10s) {
    auto o = options(ttl, wait);
    o.retry = redlock::retry_config{500ms, 1000ms};
    return o;
}

// Subscribers of the resource's released channel on one server.
std::int64_t subscribers(const redlock::test::redis_server& s, const std::string& resource) {
    auto v = s.command({"PUBSUB", "SHARDNUMSUB", "{redlock:" + resource + "}:released"});
    return v.elements.size() == 2 ? v.elements[1].integer : -1;
}

bool subscribers_everywhere(const redlock::test::server_list& servers, const std::string& resource,
                            std::int64_t n) {
    for (const auto& s : servers)
        if (subscribers(*s, resource) != n) return false;
    return true;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(waiting_test)

// max_subscriptions: one channel at a time. The waiter on a second resource is not subscribed
// and waits by timed retries; both get their lock once it is released.
BOOST_AUTO_TEST_CASE(beyond_max_subscriptions_a_waiter_polls) {
    auto servers = start_redis_servers(1);
    asio::io_context ioc;
    redlock::client holder(ioc.get_executor(), lock_config(servers));
    auto cfg = lock_config(servers);
    cfg.max_subscriptions = 1;
    redlock::client client(ioc.get_executor(), cfg);
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto a = co_await holder.async_acquire("sub-a", options(), asio::use_awaitable);
        auto b = co_await holder.async_acquire("sub-b", options(), asio::use_awaitable);
        int acquired = 0;
        auto ex = co_await asio::this_coro::executor;
        for (const char* resource : {"sub-a", "sub-b"}) {
            asio::co_spawn(
                ex,
                [&, resource]() -> asio::awaitable<void> {
                    auto o = options(10s, 10s);
                    o.retry = redlock::retry_config{20ms, 100ms};
                    auto [ec, l] = co_await client.async_acquire(resource, o, tuple_awaitable);
                    BOOST_TEST(!ec, ec.message());
                    if (!ec) ++acquired;
                },
                asio::detached);
            co_await sleep_for(100ms);
        }
        BOOST_TEST(subscribers(*servers[0], "sub-a") == 1);
        BOOST_TEST(subscribers(*servers[0], "sub-b") == 0);
        BOOST_TEST(client.metrics().waits_unsubscribed >= 1u);
        co_await a.async_release(asio::use_awaitable);
        co_await b.async_release(asio::use_awaitable);
        BOOST_TEST(co_await eventually([&] { return acquired == 2; }));
    }());
}

BOOST_DATA_TEST_CASE(fifty_waiters_one_subscription_and_a_release_wakes_one, node_counts, n) {
    auto servers = start_redis_servers(static_cast<std::size_t>(n));
    asio::io_context ioc;
    redlock::client holder(ioc.get_executor(), lock_config(servers));
    redlock::client client(ioc.get_executor(), lock_config(servers));
    constexpr int waiters = 50;
    run_coro(
        ioc,
        [&]() -> asio::awaitable<void> {
            auto first = co_await holder.async_acquire("q", options(), asio::use_awaitable);
            // One attempt each needs the holder on every node (see held_everywhere).
            BOOST_TEST_REQUIRE(co_await eventually([&] { return held_everywhere(servers, "q", first); }));
            int acquired = 0;
            int failed = 0;
            int inside = 0;
            int max_inside = 0;
            auto ex = co_await asio::this_coro::executor;
            for (int i = 0; i < waiters; ++i) {
                asio::co_spawn(
                    ex,
                    [&]() -> asio::awaitable<void> {
                        auto [ec, l] = co_await client.async_acquire("q", waiting(30s), tuple_awaitable);
                        if (ec) {
                            ++failed;
                            co_return;
                        }
                        max_inside = std::max(max_inside, ++inside);
                        co_await sleep_for(10ms);
                        --inside;
                        co_await l.async_release(asio::use_awaitable);
                        ++acquired;
                    },
                    asio::detached);
            }
            // Every waiter tried once and sleeps: one subscription per node for all of them. Once
            // it is confirmed everywhere the oldest waiter tries once more (a release before the
            // SUBSCRIBE ran would have gone unheard), the others do not.
            co_await sleep_for(300ms);
            BOOST_TEST(subscribers_everywhere(servers, "q", 1));
            const auto attempts_before = client.metrics().attempts;
            BOOST_TEST(attempts_before >= static_cast<std::uint64_t>(waiters));
            BOOST_TEST(attempts_before <= static_cast<std::uint64_t>(waiters + 1));

            co_await first.async_release(asio::use_awaitable);
            BOOST_TEST(co_await eventually([&] { return acquired + failed == waiters; }, 30s));
            BOOST_TEST(acquired == waiters);
            BOOST_TEST(max_inside == 1);
            const auto m = client.metrics();
            BOOST_TEST_MESSAGE("N=" << n << ": " << m.release_wakeups << " wake-ups, "
                                    << m.attempts - attempts_before
                                    << " attempts after the first release for " << waiters << " hand-offs");
            // One release, one wake-up: never the whole herd (that would be about waiters^2 / 2).
            BOOST_TEST(m.release_wakeups <= static_cast<std::uint64_t>(waiters));
            BOOST_TEST(m.release_wakeups >= static_cast<std::uint64_t>(waiters * 3 / 4));
            BOOST_TEST(m.attempts - attempts_before <= static_cast<std::uint64_t>(4 * waiters));
            // Nobody waits any more: nothing stays subscribed.
            BOOST_TEST(co_await eventually([&] { return subscribers_everywhere(servers, "q", 0); }));
            BOOST_TEST(co_await eventually([&] { return no_key_anywhere(servers, "q"); }));
        }(),
        60s);
}

BOOST_DATA_TEST_CASE(wait_timeout_and_cancellation_leave_no_subscription, node_counts, n) {
    auto servers = start_redis_servers(static_cast<std::size_t>(n));
    asio::io_context ioc;
    redlock::client holder(ioc.get_executor(), lock_config(servers));
    redlock::client client(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto held = co_await holder.async_acquire("x", options(), asio::use_awaitable);
        const auto start = clock_type::now();
        auto [ec, l] = co_await client.async_acquire("x", waiting(700ms), tuple_awaitable);
        BOOST_TEST(ec == redlock::error::wait_timeout);
        BOOST_TEST((clock_type::now() - start >= 700ms));
        BOOST_TEST(co_await eventually([&] { return subscribers_everywhere(servers, "x", 0); }));

        asio::cancellation_signal cancel;
        std::optional<error_code> result;
        client.async_acquire(
            "x", waiting(30s),
            asio::bind_cancellation_slot(cancel.slot(), [&](error_code e, redlock::lease) { result = e; }));
        BOOST_TEST(co_await eventually([&] { return subscribers_everywhere(servers, "x", 1); }));
        cancel.emit(asio::cancellation_type::terminal);
        BOOST_TEST(co_await eventually([&] { return result.has_value(); }));
        BOOST_TEST((result == error_code(asio::error::operation_aborted)));
        BOOST_TEST(co_await eventually([&] { return subscribers_everywhere(servers, "x", 0); }));
        BOOST_TEST(held.held());
        co_await held.async_release(asio::use_awaitable);
    }());
}

BOOST_DATA_TEST_CASE(without_a_release_message_the_waiter_wakes_when_the_holder_expires, node_counts, n) {
    auto servers = start_redis_servers(static_cast<std::size_t>(n));
    asio::io_context ioc;
    redlock::client holder(ioc.get_executor(), lock_config(servers));
    redlock::client client(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        // The holder never releases: its key expires, and nothing is published.
        auto held = co_await holder.async_acquire("e", options(1000ms), asio::use_awaitable);
        const auto expires = held.valid_until() + 50ms;  // the servers' expiry, give or take the drift
        auto o = waiting(10s);
        o.retry = redlock::retry_config{3000ms, 3000ms};  // the backoff alone would sleep 3 s
        auto got = co_await client.async_acquire("e", o, asio::use_awaitable);
        BOOST_TEST(got.held());
        // Not before the holder's key expired (its validity is a lower bound of that), and a
        // second before the backoff's try (3 s after the first, 2 s after the expiry).
        BOOST_TEST((clock_type::now() >= held.valid_until()));
        BOOST_TEST((clock_type::now() < expires + 1000ms));
        co_await got.async_release(asio::use_awaitable);

        // The same with reentrant locks of two owners: the acquire script reports the PTTL.
        auto mine = options(1000ms);
        mine.reentrant = true;
        mine.owner = redlock::owner_id("holder");
        auto held_r = co_await holder.async_acquire("e2", mine, asio::use_awaitable);
        const auto expires_r = held_r.valid_until() + 50ms;
        auto theirs = o;
        theirs.reentrant = true;
        theirs.owner = redlock::owner_id("waiter");
        auto got_r = co_await client.async_acquire("e2", theirs, asio::use_awaitable);
        BOOST_TEST(got_r.held());
        BOOST_TEST((clock_type::now() >= held_r.valid_until()));
        BOOST_TEST((clock_type::now() < expires_r + 1000ms));
        co_await got_r.async_release(asio::use_awaitable);
    }());
}

// A release message's payload names the release, not the releaser: the listener drops a
// payload it saw on the channel within a second (the same release published by several
// nodes). One owner releases twice within that second; the waiter, whose try after the first
// release came too late (its requests take 50 ms, the owner took the lock back at once), must be
// woken by the second. With the owner as payload it slept until its backoff (3 s and more).
// A waiter subscribes after its round was refused, on another connection: a release before
// its SUBSCRIBE takes effect is not heard. Here the subscriber connections are 300 ms slower
// than the others and the holder releases as soon as they open; the waiter tries once more when
// its subscription is in place on every node (about 900 ms). Without that it slept until its
// backoff (3 s).
BOOST_DATA_TEST_CASE(a_release_before_the_subscription_took_effect_is_made_up_for_once_it_did, node_counts,
                     n) {
    auto servers = start_redis_servers(static_cast<std::size_t>(n));
    auto proxied = redlock::test::through_proxies(servers);
    auto& proxies = proxied.proxies;
    asio::io_context ioc;
    redlock::client holder(ioc.get_executor(), lock_config(servers));
    redlock::client client(ioc.get_executor(), proxied.config);
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto held = co_await holder.async_acquire("late", options(10s), asio::use_awaitable);
        BOOST_TEST_REQUIRE(co_await eventually([&] { return held_everywhere(servers, "late", held); }));
        BOOST_TEST_REQUIRE(
            co_await eventually([&] { return redlock::test::accepted_everywhere(proxies, 1); }));
        for (auto& p : proxies)
            p->set_request_delay_of_new_connections(300ms);
        auto o = waiting(20s);
        o.retry = redlock::retry_config{3000ms, 3000ms};
        redlock::test::background_acquire waiter;
        waiter.start(client, "late", o);
        // Refused everywhere: the subscriber connections open.
        BOOST_TEST_REQUIRE(
            co_await eventually([&] { return redlock::test::accepted_everywhere(proxies, 2); }));
        const auto released = clock_type::now();
        co_await held.async_release(asio::use_awaitable);
        BOOST_TEST_REQUIRE(co_await eventually([&] { return waiter.result.has_value(); }, 10s));
        const auto waited = clock_type::now() - released;
        BOOST_TEST_MESSAGE("N=" << n << ": the waiter got the lock "
                                << std::chrono::duration_cast<std::chrono::milliseconds>(waited).count()
                                << " ms after the unheard release");
        BOOST_TEST(!*waiter.result);
        BOOST_TEST((waited < 2s));
        BOOST_TEST(waiter.lease->held());
        co_await waiter.lease->async_release(asio::use_awaitable);
    }());
}

BOOST_AUTO_TEST_CASE(two_releases_by_one_owner_within_a_second_wake_the_waiter_twice) {
    auto servers = start_redis_servers(1);
    redlock::test::tcp_proxy proxy(servers[0]->port());
    asio::io_context ioc;
    redlock::client holder(ioc.get_executor(), lock_config(servers));
    redlock::client client(ioc.get_executor(), through(proxy));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto mine = options(10s);
        mine.reentrant = true;
        mine.owner = redlock::owner_id("holder");
        auto held = co_await holder.async_acquire("twice", mine, asio::use_awaitable);
        auto o = waiting(10s);
        o.retry = redlock::retry_config{3000ms, 3000ms};
        o.reentrant = true;
        o.owner = redlock::owner_id("waiter");
        o.node_timeout = 1000ms;  // above the proxy's delay
        std::optional<clock_type::time_point> got_at;
        std::optional<redlock::lease> got;
        redlock::diagnostics diag;
        proxy.set_request_delay(50ms);
        client.async_acquire("twice", o, diag, [&](error_code ec, redlock::lease l) {
            BOOST_TEST(!ec, ec.message());
            got_at = clock_type::now();
            got.emplace(std::move(l));
        });
        BOOST_TEST(co_await eventually([&] { return subscribers(*servers[0], "twice") == 1; }));
        co_await sleep_for(200ms);  // the first try has been refused: the waiter sleeps
        co_await held.async_release(asio::use_awaitable);
        held = co_await holder.async_acquire("twice", mine, asio::use_awaitable);
        co_await sleep_for(300ms);
        BOOST_TEST(!got_at.has_value());  // its try came after the owner took the lock back
        const auto released_at = clock_type::now();
        co_await held.async_release(asio::use_awaitable);
        BOOST_TEST(co_await eventually([&] { return got_at.has_value(); }, 8s));
        BOOST_TEST_REQUIRE(got_at.has_value());
        const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(*got_at - released_at);
        BOOST_TEST_MESSAGE("held " << took.count() << " ms after the second release, " << diag.attempts
                                   << " attempts");
        BOOST_TEST(diag.attempts >= 3u);  // refused, woken and refused again, woken and granted
        // The backoff alone would try again 3 s after the last refusal.
        BOOST_TEST((took < 2000ms));
        proxy.set_request_delay(0ms);
        co_await got->async_release(asio::use_awaitable);
    }());
}

// A round split between contenders ends in quiet releases: no message says that the lock is
// free again. Two keys stand for the other contenders' grants on nodes 0 and 1 of 3; the
// waiter gets node 2 alone, and the keys go without a message 300 ms later. A waiter that slept
// until its backoff (3 s) or the keys' PTTL (10 s) would hold the lock seconds later.
BOOST_AUTO_TEST_CASE(a_waiter_that_lost_a_split_round_tries_again_without_a_message) {
    auto servers = start_redis_servers(3);
    const std::string key = "{redlock:split}:lock";
    servers[0]->command({"SET", key, "contender-a", "PX", "10000"});
    servers[1]->command({"SET", key, "contender-b", "PX", "10000"});
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto o = waiting(10s);
        o.retry = redlock::retry_config{3000ms, 3000ms};
        std::optional<clock_type::time_point> got_at;
        std::optional<redlock::lease> got;
        redlock::diagnostics diag;
        const auto started = clock_type::now();
        client.async_acquire("split", o, diag, [&](error_code ec, redlock::lease l) {
            BOOST_TEST(!ec, ec.message());
            got_at = clock_type::now();
            got.emplace(std::move(l));
        });
        co_await sleep_for(300ms);
        BOOST_TEST(!got_at.has_value());
        for (int i = 0; i < 2; ++i)
            servers[i]->command({"DEL", key});
        BOOST_TEST(co_await eventually([&] { return got_at.has_value(); }, 5s));
        BOOST_TEST_REQUIRE(got_at.has_value());
        const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(*got_at - started);
        BOOST_TEST_MESSAGE("held after " << took.count() << " ms, " << diag.attempts << " attempts");
        BOOST_TEST((*got_at - started < 2000ms));
        // The tries come further apart with each split: a few dozen at most, not a busy loop.
        BOOST_TEST(diag.attempts <= 30u);
        BOOST_TEST(got->held());
        co_await got->async_release(asio::use_awaitable);
    }());
}

// A holder that took 2 of 3 nodes, with the third left free (its SET there came after a
// waiter's, say): every round of the waiter is split, 1 grant against 2 denials, and its waits
// double each time. They still end when the holder's key expires (1 s): the denials' PTTL caps
// them as it caps a wait for a message. The holder's nodes answer through proxies 20 ms late,
// so that the grant always comes first and the round counts as split when it is decided.
// Uncapped, the doubling random waits went past the expiry by up to their own length (about
// 1 s here), by more than 300 ms about every other time: four resources at once make a pass
// by luck unlikely.
BOOST_AUTO_TEST_CASE(split_rounds_wait_no_longer_than_the_holders_pttl) {
    auto servers = start_redis_servers(3);
    std::vector<std::unique_ptr<redlock::test::tcp_proxy>> proxies;
    auto cfg = lock_config(servers);
    for (int i = 0; i < 2; ++i) {
        proxies.push_back(std::make_unique<redlock::test::tcp_proxy>(servers[i]->port()));
        proxies.back()->set_reply_delay(20ms);
        cfg.nodes[i] = proxies.back()->uri();
    }
    constexpr int resources = 4;
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), cfg);
    // Connected first, and one round timed: what is measured below is the waiting alone, and its
    // slack grows with the round trips of this machine at this moment.
    clock_type::duration round_trip{};
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto warm = co_await client.async_acquire("warm", waiting(10s), asio::use_awaitable);
        co_await warm.async_release(asio::use_awaitable);
        const auto start = clock_type::now();
        auto timed = co_await client.async_acquire("warm", waiting(10s), asio::use_awaitable);
        round_trip = clock_type::now() - start;
        co_await timed.async_release(asio::use_awaitable);
    }());
    const auto slack = std::max<clock_type::duration>(300ms, 10 * round_trip);
    const auto set_at = clock_type::now();
    for (int r = 0; r < resources; ++r)
        for (int i = 0; i < 2; ++i)
            servers[i]->command(
                {"SET", "{redlock:split-pttl-" + std::to_string(r) + "}:lock", "holder", "PX", "1000"});
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        int done = 0;
        auto ex = co_await asio::this_coro::executor;
        for (int r = 0; r < resources; ++r) {
            asio::co_spawn(
                ex,
                [&, r]() -> asio::awaitable<void> {
                    auto o = waiting(10s);
                    o.retry = redlock::retry_config{3000ms, 3000ms};
                    redlock::diagnostics diag;
                    auto [ec, got] = co_await client.async_acquire("split-pttl-" + std::to_string(r), o, diag,
                                                                   tuple_awaitable);
                    const auto took = clock_type::now() - set_at;
                    BOOST_TEST_MESSAGE("resource "
                                       << r << ": held "
                                       << std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
                                       << " ms after the holder's keys were set (ttl 1000 ms), "
                                       << diag.attempts << " attempts");
                    BOOST_TEST(!ec, ec.message());
                    BOOST_TEST((took < 1000ms + slack));
                    BOOST_TEST(diag.attempts <= 30u);
                    if (!ec) co_await got.async_release(asio::use_awaitable);
                    ++done;
                },
                asio::detached);
        }
        BOOST_TEST(co_await eventually([&] { return done == resources; }, 10s));
    }());
}

BOOST_AUTO_TEST_CASE(a_cut_subscriber_connection_costs_at_most_the_holders_pttl) {
    auto servers = start_redis_servers(1);
    redlock::test::tcp_proxy proxy(servers[0]->port());
    asio::io_context ioc;
    redlock::client holder(ioc.get_executor(), lock_config(servers));
    auto via_proxy = through(proxy);
    via_proxy.retry = {5ms, 20ms};
    redlock::client client(ioc.get_executor(), via_proxy);
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto held = co_await holder.async_acquire("cut", options(1500ms), asio::use_awaitable);
        std::optional<clock_type::time_point> got_at;
        std::optional<redlock::lease> got;
        auto o = waiting(10s);
        o.retry = redlock::retry_config{5000ms, 5000ms};
        client.async_acquire("cut", o, [&](error_code ec, redlock::lease l) {
            BOOST_TEST(!ec, ec.message());
            got_at = clock_type::now();
            got.emplace(std::move(l));
        });
        BOOST_TEST(co_await eventually([&] { return subscribers(*servers[0], "cut") == 1; }));
        // Cut every connection through the proxy, and refuse the subscriber's way back until the
        // release has been published: the message is lost for good.
        proxy.set_mode(redlock::test::tcp_proxy::mode::blackhole);
        proxy.reset_connections();
        const auto released_at = clock_type::now();
        co_await held.async_release(asio::use_awaitable);
        co_await sleep_for(100ms);
        proxy.set_mode(redlock::test::tcp_proxy::mode::pass);
        BOOST_TEST(co_await eventually([&] { return got_at.has_value(); }, 5s));
        BOOST_TEST_REQUIRE(got_at.has_value());
        // The holder's PTTL, not the 5 s backoff.
        BOOST_TEST((*got_at - released_at < 1500ms + 1000ms));
        co_await got->async_release(asio::use_awaitable);
    }());
}

BOOST_AUTO_TEST_SUITE_END()
