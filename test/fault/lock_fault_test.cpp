// The lock core under network faults injected by an in-test TCP proxy between the client and a
// real redis-server: slow nodes, replies lost after the command ran, quorums that arrive too late.
#include "support/lock_helpers.hpp"
#include "support/printing.hpp"
#include "support/redis_server.hpp"
#include "support/run_coro.hpp"
#include "support/tcp_proxy.hpp"
#include <redlock/redlock.hpp>

#include <boost/asio/as_tuple.hpp>
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
using redlock::test::eventually;
using redlock::test::holder_on;
using redlock::test::key_exists;
using redlock::test::lock_config;
using redlock::test::lock_key;
using redlock::test::run_coro;
using redlock::test::sleep_for;
using redlock::test::start_redis_servers;
using redlock::test::tcp_proxy;

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
    redlock::client_config cfg;
    cfg.nodes = {proxy.uri()};
    cfg.restart_quarantine = false;  // fresh servers (see lock_config)
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
        auto warm = co_await client.async_acquire("warm", options(10s, 1000ms), asio::use_awaitable);
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
    redlock::client_config cfg;
    cfg.nodes = {proxy.uri()};
    cfg.restart_quarantine = false;  // fresh servers (see lock_config)
    redlock::client client(ioc.get_executor(), cfg);
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto warm = co_await client.async_acquire("warm", options(10s, 1000ms), asio::use_awaitable);
        proxy.set_mode(tcp_proxy::mode::drop_replies);
        // A 60 s ttl: only the release can make the key go away within the test.
        auto [ec, l] = co_await client.async_acquire("lost", options(60s, 200ms), tuple_awaitable);
        BOOST_TEST(ec == redlock::error::quorum_unreachable);
        BOOST_TEST(co_await eventually([&] { return !key_exists(*servers[0], "lost"); }));
        BOOST_TEST(servers[0]->command({"INFO", "commandstats"}).str.find("cmdstat_set:calls=") !=
                   std::string::npos);
    }());
}

BOOST_AUTO_TEST_CASE(a_key_left_with_our_token_by_an_earlier_attempt_counts_as_a_grant) {
    // Attempt 1: the SET runs but its reply is lost, and its cleanup release is swallowed too;
    // the connection is then reset. Attempt 2 finds our own token and confirms it with PEXPIRE.
    auto servers = start_redis_servers(1);
    tcp_proxy proxy(servers[0]->port());
    asio::io_context ioc;
    redlock::client_config cfg;
    cfg.nodes = {proxy.uri()};
    cfg.restart_quarantine = false;  // fresh servers (see lock_config)
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
        BOOST_TEST(lease.token() == first_token);
        BOOST_TEST(diag.attempts >= 2u);
        // The confirmation gave the key the full ttl again, not the 5 s left from attempt 1.
        BOOST_TEST(servers[0]->command({"PTTL", lock_key("again")}).integer > 20000);
        co_await lease.async_release(asio::use_awaitable);
        BOOST_TEST(!key_exists(*servers[0], "again"));
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
        auto warm = co_await client.async_acquire("warm", options(10s, 1000ms), asio::use_awaitable);
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
