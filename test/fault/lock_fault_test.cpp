// SPDX-License-Identifier: BSL-1.0
// The lock core under network faults injected by an in-test TCP proxy between the client and a
// real redis-server: slow nodes, replies lost after the command ran, quorums that arrive too late.
#include "support/lock_helpers.hpp"
#include "support/printing.hpp"
#include "support/redis_server.hpp"
#include "support/run_coro.hpp"
#include "support/tcp_proxy.hpp"
#include <redlock/redlock.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace asio = boost::asio;
using namespace std::chrono_literals;
using boost::system::error_code;
using redlock::test::background_acquire;
using redlock::test::command_calls;
using redlock::test::eventually;
using redlock::test::holder_on;
using redlock::test::key_exists;
using redlock::test::lock_config;
using redlock::test::lock_key;
using redlock::test::run_coro;
using redlock::test::sleep_for;
using redlock::test::start_redis_servers;
using redlock::test::tcp_proxy;
using redlock::test::through;

namespace {

constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);

redlock::lock_options options(std::chrono::milliseconds ttl, std::chrono::milliseconds node_timeout,
                              std::chrono::milliseconds wait = 0ms) {
    redlock::lock_options o;
    o.ttl = ttl;
    o.node_timeout = node_timeout;
    o.wait = wait;
    return o;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(lock_fault_test)

BOOST_AUTO_TEST_CASE(a_node_slower_than_its_timeout_does_not_count_and_its_late_reply_corrupts_nothing) {
    auto servers = start_redis_servers(1);
    tcp_proxy proxy(servers[0]->port());
    asio::io_context ioc;
    auto cfg = through(proxy);
    redlock::client client(ioc.get_executor(), cfg);
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto warm = co_await client.async_acquire("warm", options(10s, 1000ms), asio::use_awaitable);
        proxy.set_reply_delay(400ms);
        redlock::diagnostics diag;
        auto [ec, slow] = co_await client.async_acquire("s", options(10s, 100ms), diag, tuple_awaitable);
        BOOST_TEST(ec == redlock::error::quorum_unreachable);
        BOOST_TEST(diag.message.find("timed out") != std::string::npos, diag.message);
        proxy.set_reply_delay(0ms);
        // The late replies (the SET's and the cleanup's) arrive and are dropped; the cleanup ran.
        BOOST_TEST(co_await eventually([&] { return !key_exists(*servers[0], "s"); }));
        co_await sleep_for(500ms);
        // The next requests on the same connection get their own replies.
        auto lease = co_await client.async_acquire("s", options(10s, 1000ms), asio::use_awaitable);
        BOOST_TEST(holder_on(*servers[0], "s") == lease.token());
        co_await lease.async_extend(20s, asio::use_awaitable);
        co_await lease.async_release(asio::use_awaitable);
        BOOST_TEST(!key_exists(*servers[0], "s"));
        BOOST_TEST(client.metrics().nodes[0].timeouts >= 1u);
    }());
}

BOOST_AUTO_TEST_CASE(one_slow_node_of_five_does_not_delay_or_block_the_quorum) {
    auto servers = start_redis_servers(5);
    tcp_proxy proxy(servers[2]->port());
    asio::io_context ioc;
    auto cfg = lock_config(servers);
    cfg.nodes[2] = proxy.uri();
    redlock::client client(ioc.get_executor(), cfg);
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        BOOST_TEST_REQUIRE(co_await redlock::test::warm_up_every_node(client, servers, options(10s, 1000ms)));
        proxy.set_reply_delay(1000ms);
        redlock::diagnostics diag;
        auto lease = co_await client.async_acquire("s5", options(10s, 200ms), diag, asio::use_awaitable);
        BOOST_TEST(lease.held());
        // Decided by the four fast nodes, long before the slow node's reply.
        BOOST_TEST((diag.nodes[2].result == redlock::node_outcome::verdict::pending));
        co_await lease.async_release(asio::use_awaitable);
        proxy.set_reply_delay(0ms);
        // The slow node ran the SET and then the release queued behind it.
        BOOST_TEST(co_await eventually([&] { return !key_exists(*servers[2], "s5"); }));
    }());
}

BOOST_AUTO_TEST_CASE(a_reply_lost_after_the_set_ran_is_cleaned_up_by_the_failed_attempt) {
    auto servers = start_redis_servers(1);
    tcp_proxy proxy(servers[0]->port());
    asio::io_context ioc;
    auto cfg = through(proxy);
    redlock::client client(ioc.get_executor(), cfg);
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto warm = co_await client.async_acquire("warm", options(10s, 1000ms), asio::use_awaitable);
        const auto sets_before = command_calls(*servers[0], "set");
        proxy.set_mode(tcp_proxy::mode::drop_replies);
        // A 60 s ttl: only the release can make the key go away within the test.
        auto [ec, l] = co_await client.async_acquire("lost", options(60s, 200ms), tuple_awaitable);
        BOOST_TEST(ec == redlock::error::quorum_unreachable);
        // The SET did run (its reply was what got lost), and the cleanup deleted its key.
        BOOST_TEST(command_calls(*servers[0], "set") > sets_before);
        BOOST_TEST(co_await eventually([&] { return !key_exists(*servers[0], "lost"); }));
    }());
}

BOOST_AUTO_TEST_CASE(a_key_left_with_an_earlier_attempts_token_is_taken_over_by_the_next) {
    // Attempt 1: the SET runs but its reply is lost, and its cleanup release is swallowed too;
    // the connection is then reset. Attempt 2 finds attempt 1's token and puts its own in its
    // place (takeover.lua), rather than waiting for the ttl to run out.
    auto servers = start_redis_servers(1);
    tcp_proxy proxy(servers[0]->port());
    asio::io_context ioc;
    auto cfg = through(proxy);
    cfg.retry = {1000ms, 1000ms};
    redlock::client client(ioc.get_executor(), cfg);
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto warm = co_await client.async_acquire("warm", options(10s, 1000ms), asio::use_awaitable);
        proxy.set_mode(tcp_proxy::mode::drop_replies);
        std::optional<error_code> result;
        redlock::lease lease;
        redlock::diagnostics diag;
        client.async_acquire("again", options(30s, 300ms, 10s), diag, [&](error_code ec, redlock::lease l) {
            result = ec;
            lease = std::move(l);
        });
        BOOST_TEST_REQUIRE(co_await eventually([&] { return key_exists(*servers[0], "again"); }));
        proxy.set_mode(tcp_proxy::mode::blackhole);
        const auto first_token = holder_on(*servers[0], "again");
        co_await sleep_for(600ms);  // the attempt timed out at 300 ms; its release went into the hole
        BOOST_TEST(holder_on(*servers[0], "again") == first_token);
        servers[0]->command({"PEXPIRE", lock_key("again"), "5000"});
        proxy.reset_connections();
        proxy.set_mode(tcp_proxy::mode::pass);
        BOOST_TEST_REQUIRE(co_await eventually([&] { return result.has_value(); }, 10s));
        BOOST_TEST(!*result, diag.message);
        BOOST_TEST(lease.held());
        BOOST_TEST(lease.token() != first_token);  // every attempt writes a token of its own
        BOOST_TEST(holder_on(*servers[0], "again") == lease.token());
        BOOST_TEST(diag.attempts >= 2u);
        // The takeover gave the key the full ttl again, not the 5 s left from attempt 1.
        BOOST_TEST(servers[0]->command({"PTTL", lock_key("again")}).integer > 20000);
        co_await lease.async_release(asio::use_awaitable);
        BOOST_TEST(!key_exists(*servers[0], "again"));
    }());
}

namespace {

// The chaos harness's overlap (docs/safety.md): a failed attempt's cleanup, sent on a
// connection the client then gave up, reaches the server after the next attempt, sent on the
// new connection, took the lock. With one token for all attempts the cleanup deleted that grant
// and another client took the lock from the holder. Here the proxy holds back attempt 1's
// request and cleanup; the client gives the silent connection up (health check) and wins
// attempt 2 on a new one; then the held-back bytes reach the server.
void late_cleanup_of_an_earlier_attempt(redlock::lock_options kind, redlock::lock_options rival_kind) {
    auto servers = start_redis_servers(1);
    tcp_proxy proxy(servers[0]->port());
    asio::io_context ioc;
    auto cfg = through(proxy);
    cfg.health_check_interval = 100ms;  // given up after 200 ms of silence
    cfg.retry = {500ms, 500ms};         // attempt 2 once the new connection is up
    redlock::client client(ioc.get_executor(), cfg);
    redlock::client rival(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        // Connected, scripts loaded: nothing but the attempt's own commands go through the proxy.
        auto warm_options = kind;
        warm_options.wait = 0ms;
        auto warm = co_await client.async_acquire("warm", warm_options, asio::use_awaitable);
        co_await warm.async_release(asio::use_awaitable);
        const auto accepted_before = proxy.accepted();
        proxy.hold_requests();
        background_acquire attempt;
        redlock::diagnostics diag;
        auto o = kind;
        o.ttl = 10s;
        o.node_timeout = 50ms;
        o.wait = 5s;
        o.watchdog = false;
        attempt.start(client, "r", o, diag);
        BOOST_TEST_REQUIRE(co_await eventually([&] { return attempt.result.has_value(); }, 10s));
        BOOST_TEST_REQUIRE(!*attempt.result, diag.message);
        // The scenario took place: attempt 2 won on a new connection while attempt 1's bytes
        // are held on the connection the client gave up.
        BOOST_TEST_REQUIRE(proxy.accepted() > accepted_before);
        BOOST_TEST_REQUIRE(proxy.abandoned_connections() == 1u);
        BOOST_TEST_REQUIRE(diag.attempts >= 2u);
        const auto calls = [&] {
            return command_calls(*servers[0], "set") + command_calls(*servers[0], "evalsha");
        };
        const auto calls_before = calls();
        proxy.deliver_held();
        BOOST_TEST_REQUIRE(co_await eventually([&] { return proxy.abandoned_connections() == 0; }));
        BOOST_TEST_REQUIRE(calls() > calls_before);
        // Attempt 1's request and cleanup have run now: the lock is still ours, and no rival gets it.
        auto& lease = *attempt.lease;
        BOOST_TEST(key_exists(*servers[0], "r"));
        auto r = rival_kind;
        r.ttl = 10s;
        r.wait = 0ms;
        auto [ec, stolen] = co_await rival.async_acquire("r", r, tuple_awaitable);
        BOOST_TEST((ec == redlock::error::not_acquired), ec.message());
        BOOST_TEST(lease.held());
        co_await lease.async_release(asio::use_awaitable);
        BOOST_TEST(co_await eventually([&] { return !key_exists(*servers[0], "r"); }));
    }());
}

redlock::lock_options reentrant_of(const char* owner) {
    redlock::lock_options o;
    o.reentrant = true;
    o.owner = redlock::owner_id(owner);
    return o;
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_late_cleanup_of_an_earlier_attempt_leaves_a_plain_grant_alone) {
    late_cleanup_of_an_earlier_attempt(redlock::lock_options{}, redlock::lock_options{});
}

BOOST_AUTO_TEST_CASE(a_late_cleanup_of_an_earlier_attempt_leaves_a_fenced_grant_alone) {
    redlock::lock_options fenced;
    fenced.fenced = true;
    late_cleanup_of_an_earlier_attempt(fenced, fenced);
}

BOOST_AUTO_TEST_CASE(a_late_cleanup_of_an_earlier_attempt_leaves_a_reentrant_grant_alone) {
    late_cleanup_of_an_earlier_attempt(reentrant_of("holder"), reentrant_of("rival"));
}

BOOST_AUTO_TEST_CASE(a_late_cleanup_of_an_earlier_attempt_leaves_a_fair_grant_alone) {
    redlock::lock_options fair;
    fair.fair = true;
    late_cleanup_of_an_earlier_attempt(fair, fair);
}

// A fenced reentrant round can win on a quorum and still wait for a slow node: whether it
// re-enters an existing hold (and so which fence it has) depends on that node's answer. An
// acquire cancelled then holds the lock on the quorum: its cancellation releases it everywhere.
// Before, it sent no release, and its holds stayed for the full ttl.
BOOST_AUTO_TEST_CASE(a_fenced_reentrant_round_cancelled_while_its_holds_settle_leaves_nothing) {
    auto servers = start_redis_servers(3);
    auto proxied = redlock::test::through_proxies(servers);
    proxied.config.health_check_interval = 30s;  // node 2's held connection is not given up
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), proxied.config);
    const std::string key = lock_key("h");
    // The owner already holds it on node 0 (another acquisition of it, fence 7).
    servers[0]->command({"HSET", key, "o", "me", "a:planted", "1", "f", "7"});
    servers[0]->command({"PEXPIRE", key, "60000"});
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        BOOST_TEST_REQUIRE(co_await redlock::test::warm_up_every_node(client, servers, options(10s, 1000ms)));
        proxied.proxies[2]->hold_requests();
        auto o = options(60s, 30000ms);
        o.reentrant = true;
        o.owner = redlock::owner_id("me");
        o.fenced = true;
        asio::cancellation_signal cancel;
        std::optional<error_code> result;
        client.async_acquire(
            "h", o,
            asio::bind_cancellation_slot(cancel.slot(), [&](error_code ec, redlock::lease) { result = ec; }));
        // Nodes 0 and 1 granted (an existing hold, a new one): won, waiting for node 2.
        const auto replies_before = proxied.proxies[1]->bytes_from_server();
        BOOST_TEST_REQUIRE(co_await eventually([&] {
            return key_exists(*servers[1], "h") && servers[0]->command({"HLEN", key}).integer == 4 &&
                   proxied.proxies[1]->bytes_from_server() > replies_before;
        }));
        co_await sleep_for(50ms);  // the replies are read on this thread
        BOOST_TEST_REQUIRE(!result.has_value());
        cancel.emit(asio::cancellation_type::terminal);
        BOOST_TEST_REQUIRE(co_await eventually([&] { return result.has_value(); }));
        BOOST_TEST((*result == asio::error::operation_aborted));
        proxied.proxies[2]->deliver_held();
        // Node 2 ran the held acquire, then the release behind it; the others the release.
        BOOST_TEST(co_await eventually([&] {
            return !key_exists(*servers[1], "h") && !key_exists(*servers[2], "h") &&
                   servers[0]->command({"HLEN", key}).integer == 3;
        }));
        BOOST_TEST(command_calls(*servers[2], "evalsha") >= 2u);
        BOOST_TEST(servers[0]->command({"HGET", key, "a:planted"}).str == "1");  // the other hold stays
    }());
}

BOOST_AUTO_TEST_CASE(a_quorum_reached_after_the_validity_ran_out_is_validity_expired) {
    auto servers = start_redis_servers(5);
    std::vector<std::unique_ptr<tcp_proxy>> proxies;
    auto cfg = lock_config(servers);
    for (std::size_t i = 0; i < servers.size(); ++i) {
        proxies.push_back(std::make_unique<tcp_proxy>(servers[i]->port()));
        cfg.nodes[i] = proxies.back()->uri();
    }
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), cfg);
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        BOOST_TEST_REQUIRE(co_await redlock::test::warm_up_every_node(client, servers, options(10s, 1000ms)));
        for (auto& p : proxies)
            p->set_reply_delay(150ms);
        redlock::diagnostics diag;
        // ttl 100 ms, but every node answers after 150 ms: granted, too late to be of use.
        auto [ec, l] = co_await client.async_acquire("late", options(100ms, 2000ms), diag, tuple_awaitable);
        BOOST_TEST(ec == redlock::error::validity_expired, diag.message);
        BOOST_TEST(!l.held());
        for (auto& p : proxies)
            p->set_reply_delay(0ms);
        BOOST_TEST(co_await eventually([&] { return redlock::test::no_key_anywhere(servers, "late"); }));
        BOOST_TEST(client.metrics().failed_validity_expired == 1u);
    }());
}

BOOST_AUTO_TEST_SUITE_END()
