// SPDX-License-Identifier: BSL-1.0
// The lock core against real redis-servers, N = 1 and N = 5: acquire, extend, release, waiting,
// failures of nodes, ownership checks, dropped leases.
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
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <string>
#include <vector>

namespace asio = boost::asio;
namespace data = boost::unit_test::data;
using namespace std::chrono_literals;
using boost::system::error_code;
using redlock::test::command_calls;
using redlock::test::eventually;
using redlock::test::holder_on;
using redlock::test::lock_config;
using redlock::test::lock_key;
using redlock::test::nodes_holding;
using redlock::test::options;
using redlock::test::run_coro;
using redlock::test::sleep_for;
using redlock::test::start_redis_servers;
using clock_type = std::chrono::steady_clock;

namespace {

constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);
const auto node_counts = data::make({1, 5});

}  // namespace

BOOST_AUTO_TEST_SUITE(lock_test)

BOOST_DATA_TEST_CASE(acquire_sets_the_token_on_every_node_and_release_deletes_it, node_counts, n) {
    auto servers = start_redis_servers(static_cast<std::size_t>(n));
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        const auto before = clock_type::now();
        auto lease = co_await client.async_acquire("orders:42", options(10s), asio::use_awaitable);
        const auto after = clock_type::now();
        BOOST_TEST(lease.held());
        BOOST_TEST(lease.resource() == "orders:42");
        // 128 random bits in hex, then who holds (identify_holder: 'x' and more hex).
        BOOST_TEST(lease.token().find_first_not_of("0123456789abcdef") == 32u);
        BOOST_TEST(redlock::identity_of(lease.token()).has_value());
        BOOST_TEST(lease.fence() == 0u);
        BOOST_TEST(lease.nodes_granted() >= static_cast<unsigned>(n / 2 + 1));
        // valid_until = t0 + ttl - (ttl * 0.01 + 2 ms), with t0 taken between `before` and `after`.
        BOOST_TEST((lease.valid_until() >= before + 9898ms));
        BOOST_TEST((lease.valid_until() <= after + 9898ms));
        BOOST_TEST((lease.remaining() > 9s));
        co_await eventually(
            [&] { return nodes_holding(servers, "orders:42", lease.token()) == servers.size(); });
        for (const auto& s : servers) {
            auto pttl = s->command({"PTTL", lock_key("orders:42")});
            BOOST_TEST(pttl.integer > 9000);
            BOOST_TEST(pttl.integer <= 10000);
        }

        co_await lease.async_release(asio::use_awaitable);
        BOOST_TEST(!lease.held());
        co_await eventually([&] { return nodes_holding(servers, "orders:42", lease.token()) == 0; });
        for (const auto& s : servers)
            BOOST_TEST(s->command({"EXISTS", lock_key("orders:42")}).integer == 0);

        auto m = client.metrics();
        BOOST_TEST(m.acquired == 1u);
        BOOST_TEST(m.released == 1u);
        BOOST_TEST(m.acquire_latency.count == 1u);
        BOOST_TEST(m.nodes.size() == servers.size());
    }());
}

BOOST_DATA_TEST_CASE(a_held_resource_is_not_acquired_and_the_holder_is_untouched, node_counts, n) {
    auto servers = start_redis_servers(static_cast<std::size_t>(n));
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto first = co_await client.async_acquire("r", options(), asio::use_awaitable);
        redlock::diagnostics diag;
        auto [ec, second] = co_await client.async_acquire("r", options(), diag, tuple_awaitable);
        BOOST_TEST(ec == redlock::error::not_acquired);
        BOOST_TEST(!second.held());
        BOOST_TEST(diag.attempts == 1u);
        BOOST_TEST(diag.message.find("\"r\"") != std::string::npos, diag.message);
        BOOST_TEST(diag.message.find(servers[0]->uri()) != std::string::npos, diag.message);
        BOOST_TEST(diag.nodes.size() == servers.size());
        // The holder keeps its key everywhere.
        BOOST_TEST(nodes_holding(servers, "r", first.token()) == servers.size());
        BOOST_TEST(client.metrics().failed_not_acquired == 1u);
        BOOST_TEST(client.metrics().contended == 1u);
    }());
}

BOOST_DATA_TEST_CASE(a_waiter_gets_the_lock_after_the_holder_releases, node_counts, n) {
    auto servers = start_redis_servers(static_cast<std::size_t>(n));
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto holder = co_await client.async_acquire("w", options(), asio::use_awaitable);
        auto release_later = [](redlock::lease l) -> asio::awaitable<void> {
            co_await sleep_for(200ms);
            co_await l.async_release(asio::use_awaitable);
        };
        asio::co_spawn(ioc, release_later(std::move(holder)), asio::detached);
        redlock::diagnostics diag;
        const auto start = clock_type::now();
        auto waiter = co_await client.async_acquire("w", options(10s, 5s), diag, asio::use_awaitable);
        BOOST_TEST(waiter.held());
        BOOST_TEST((clock_type::now() - start >= 150ms));
        BOOST_TEST(diag.attempts > 1u);
    }());
}

BOOST_DATA_TEST_CASE(a_wait_that_runs_out_is_wait_timeout, node_counts, n) {
    auto servers = start_redis_servers(static_cast<std::size_t>(n));
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto holder = co_await client.async_acquire("t", options(), asio::use_awaitable);
        const auto start = clock_type::now();
        auto [ec, l] = co_await client.async_acquire("t", options(10s, 300ms), tuple_awaitable);
        BOOST_TEST(ec == redlock::error::wait_timeout);
        BOOST_TEST((clock_type::now() - start >= 300ms));
        BOOST_TEST(nodes_holding(servers, "t", holder.token()) == servers.size());
        BOOST_TEST(client.metrics().failed_wait_timeout == 1u);
    }());
}

BOOST_DATA_TEST_CASE(extend_gives_the_keys_a_new_ttl_and_moves_the_validity, node_counts, n) {
    auto servers = start_redis_servers(static_cast<std::size_t>(n));
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto lease = co_await client.async_acquire("e", options(2s), asio::use_awaitable);
        const auto first_validity = lease.valid_until();
        co_await sleep_for(100ms);
        co_await lease.async_extend(30s, asio::use_awaitable);
        BOOST_TEST(lease.held());
        BOOST_TEST((lease.valid_until() > first_validity + 20s));
        co_await eventually([&] {
            for (const auto& s : servers) {
                if (s->command({"PTTL", lock_key("e")}).integer <= 20000) return false;
            }
            return true;
        });
        for (const auto& s : servers)
            BOOST_TEST(s->command({"PTTL", lock_key("e")}).integer > 20000);
        BOOST_TEST(client.metrics().extended == 1u);
        co_await lease.async_release(asio::use_awaitable);
    }());
}

BOOST_DATA_TEST_CASE(extend_and_release_of_a_lease_no_longer_ours_are_not_owner, node_counts, n) {
    auto servers = start_redis_servers(static_cast<std::size_t>(n));
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto lease = co_await client.async_acquire("o", options(), asio::use_awaitable);
        auto other = co_await client.async_acquire("p", options(), asio::use_awaitable);
        // Someone else now holds "o" everywhere (as after our expiry and their acquire).
        for (const auto& s : servers)
            s->command({"SET", lock_key("o"), "someone-else", "PX", "60000"});
        redlock::diagnostics diag;
        auto [ec1] = co_await lease.async_extend(10s, diag, tuple_awaitable);
        BOOST_TEST(ec1 == redlock::error::not_owner);
        BOOST_TEST(!lease.held());
        BOOST_TEST(diag.message.find("\"o\"") != std::string::npos, diag.message);
        auto [ec2] = co_await lease.async_release(tuple_awaitable);
        BOOST_TEST(ec2 == redlock::error::not_owner);
        for (const auto& s : servers) {
            BOOST_TEST(holder_on(*s, "o") == "someone-else");
            BOOST_TEST(s->command({"PTTL", lock_key("o")}).integer > 50000);
        }

        // A release that finds the key gone everywhere is not_owner as well.
        for (const auto& s : servers)
            s->command({"DEL", lock_key("p")});
        auto [ec3] = co_await other.async_release(tuple_awaitable);
        BOOST_TEST(ec3 == redlock::error::not_owner);
    }());
}

BOOST_DATA_TEST_CASE(extend_never_recreates_a_missing_key, node_counts, n) {
    auto servers = start_redis_servers(static_cast<std::size_t>(n));
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto lease = co_await client.async_acquire("m", options(), asio::use_awaitable);
        // The acquire completed at a quorum: let the other SETs land, so that what we delete
        // stays deleted unless extend recreates it.
        BOOST_TEST(co_await eventually(
            [&] { return nodes_holding(servers, "m", lease.token()) == servers.size(); }));
        for (const auto& s : servers)
            s->command({"DEL", lock_key("m")});
        auto [ec] = co_await lease.async_extend(10s, tuple_awaitable);
        BOOST_TEST(ec == redlock::error::not_owner);
        for (const auto& s : servers)
            BOOST_TEST(s->command({"EXISTS", lock_key("m")}).integer == 0);
    }());
}

BOOST_DATA_TEST_CASE(extend_and_release_survive_script_flush, node_counts, n) {
    auto servers = start_redis_servers(static_cast<std::size_t>(n));
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto lease = co_await client.async_acquire("f", options(), asio::use_awaitable);
        for (const auto& s : servers)
            s->command({"SCRIPT", "FLUSH"});
        co_await lease.async_extend(20s, asio::use_awaitable);
        for (const auto& s : servers)
            s->command({"SCRIPT", "FLUSH"});
        co_await lease.async_release(asio::use_awaitable);
        // Release completes at a quorum; the other nodes' EVAL round trips may still be running.
        BOOST_TEST(co_await eventually([&] { return redlock::test::no_key_anywhere(servers, "f"); }));
    }());
}

BOOST_DATA_TEST_CASE(a_dropped_lease_is_released_in_the_background, node_counts, n) {
    auto servers = start_redis_servers(static_cast<std::size_t>(n));
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        std::string token;
        {
            auto lease = co_await client.async_acquire("d", options(), asio::use_awaitable);
            token = lease.token();
        }
        BOOST_TEST(co_await eventually([&] { return nodes_holding(servers, "d", token) == 0; }));
        BOOST_TEST(client.metrics().leases_dropped == 1u);
        // Moving a lease does not release it; assigning over a held one drops the old one.
        auto a = co_await client.async_acquire("d", options(), asio::use_awaitable);
        auto moved = std::move(a);
        BOOST_TEST(!a.held());
        BOOST_TEST(moved.held());
        auto b = co_await client.async_acquire("d2", options(), asio::use_awaitable);
        const auto b_token = b.token();
        b = std::move(moved);
        BOOST_TEST(co_await eventually([&] { return nodes_holding(servers, "d2", b_token) == 0; }));
        BOOST_TEST(nodes_holding(servers, "d", b.token()) == servers.size());
        BOOST_TEST(client.metrics().leases_dropped == 2u);
    }());
}

BOOST_AUTO_TEST_CASE(two_of_five_nodes_down_still_acquire_three_down_is_quorum_unreachable) {
    auto servers = start_redis_servers(5);
    asio::io_context ioc;
    auto cfg = lock_config(servers);
    cfg.node_timeout = 100ms;
    redlock::client client(ioc.get_executor(), cfg);
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto warm = co_await client.async_acquire("warm", options(), asio::use_awaitable);
        servers[0]->stop();
        servers[3]->stop();
        auto lease = co_await client.async_acquire("q", options(), asio::use_awaitable);
        BOOST_TEST(lease.held());
        BOOST_TEST(lease.nodes_granted() == 3u);
        co_await lease.async_release(asio::use_awaitable);

        servers[4]->kill9();
        const std::uint64_t sets_before[] = {command_calls(*servers[1], "set"),
                                             command_calls(*servers[2], "set")};
        const std::uint64_t dels_before[] = {command_calls(*servers[1], "del"),
                                             command_calls(*servers[2], "del")};
        redlock::diagnostics diag;
        const auto start = clock_type::now();
        auto [ec, l] = co_await client.async_acquire("q", options(), diag, tuple_awaitable);
        const auto took = clock_type::now() - start;
        BOOST_TEST(ec == redlock::error::quorum_unreachable);
        // About one node timeout (100 ms); the bound only proves it does not hang.
        BOOST_TEST((took < 2s));
        BOOST_TEST(diag.message.find(servers[4]->uri()) != std::string::npos, diag.message);
        // The two live nodes granted (the round may have been decided before their answers came)
        // and the failed attempt took their keys back: each ran our SET, then the release's DEL,
        // and holds no key. The 10 s ttl outlasts the wait, so a key left behind fails the test.
        for (int i : {0, 1}) {
            auto& server = *servers[static_cast<std::size_t>(i + 1)];
            BOOST_TEST(co_await eventually([&] {
                return command_calls(server, "set") > sets_before[i] &&
                       command_calls(server, "del") > dels_before[i];
            }));
            BOOST_TEST(server.command({"EXISTS", lock_key("q")}).integer == 0);
        }
        auto m = client.metrics();
        BOOST_TEST(m.failed_quorum_unreachable == 1u);
        BOOST_TEST(m.nodes[4].timeouts + m.nodes[4].errors >= 1u);
    }());
}

// The client connects at construction; an acquire made at once must not fail because the
// handshake (HELLO, the script loads) takes longer than the per-node timeout. Once connected,
// a node that answers later than it does not count.
BOOST_AUTO_TEST_CASE(an_acquire_right_after_construction_waits_for_the_handshake_not_the_node_timeout) {
    auto servers = start_redis_servers(1);
    auto& server = *servers[0];
    asio::io_context ioc;
    server.pause();  // the kernel accepts the connection; HELLO waits
    redlock::client client(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        co_await redlock::test::resume_after(server, 300ms);
        auto o = options(10s);
        o.node_timeout = 100ms;
        auto [ec, lease] = co_await client.async_acquire("first", o, tuple_awaitable);
        BOOST_TEST(!ec, ec.message());
        BOOST_TEST(lease.held());

        server.pause();
        auto [late, none] = co_await client.async_acquire("second", o, tuple_awaitable);
        server.resume();
        BOOST_TEST(late == redlock::error::quorum_unreachable);
        BOOST_TEST(!none.held());
        co_await lease.async_release(asio::use_awaitable);
        BOOST_TEST(co_await eventually([&] { return !redlock::test::key_exists(server, "second"); }));
        BOOST_TEST(!redlock::test::key_exists(server, "first"));
    }());
}

BOOST_AUTO_TEST_CASE(bad_requests_fail_with_their_own_error) {
    auto servers = start_redis_servers(1);
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        redlock::diagnostics diag;
        auto [e1, l1] = co_await client.async_acquire("x", options(0ms), diag, tuple_awaitable);
        BOOST_TEST(e1 == redlock::error::invalid_ttl);
        BOOST_TEST(diag.message.find("ttl") != std::string::npos, diag.message);
        auto [e2, l2] = co_await client.async_acquire("x", options(61s), tuple_awaitable);
        BOOST_TEST(e2 == redlock::error::invalid_ttl);
        auto [e3, l3] = co_await client.async_acquire("", options(), tuple_awaitable);
        BOOST_TEST(e3 == redlock::error::invalid_resource);
        auto [e4, l4] = co_await client.async_acquire(std::string(2000, 'r'), options(), tuple_awaitable);
        BOOST_TEST(e4 == redlock::error::invalid_resource);
        auto bad_retry = options();
        bad_retry.retry = redlock::retry_config{50ms, 10ms};
        auto [e5, l5] = co_await client.async_acquire("x", bad_retry, tuple_awaitable);
        BOOST_TEST(e5 == redlock::error::invalid_config);

        redlock::lease empty;
        auto [e6] = co_await empty.async_release(tuple_awaitable);
        BOOST_TEST(e6 == redlock::error::not_owner);
        auto [e7] = co_await empty.async_extend(1s, tuple_awaitable);
        BOOST_TEST(e7 == redlock::error::not_owner);
        auto held = co_await client.async_acquire("x", options(), asio::use_awaitable);
        auto [e8] = co_await held.async_extend(0ms, tuple_awaitable);
        BOOST_TEST(e8 == redlock::error::invalid_ttl);
        BOOST_TEST(held.held());
        co_await held.async_release(asio::use_awaitable);
        auto [e9] = co_await held.async_release(tuple_awaitable);
        BOOST_TEST(e9 == redlock::error::not_owner);
        BOOST_TEST(client.metrics().failed_other == 5u);
    }());

    redlock::client_config bad;
    bad.nodes = {"redis://127.0.0.1:1", "http://nope"};
    BOOST_CHECK_EXCEPTION(redlock::client(ioc.get_executor(), bad), boost::system::system_error,
                          [](const boost::system::system_error& e) {
                              return e.code() == redlock::error::invalid_uri &&
                                     std::string(e.what()).find("nodes[1]") != std::string::npos;
                          });
}

BOOST_AUTO_TEST_SUITE_END()
