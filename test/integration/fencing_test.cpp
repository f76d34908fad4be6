// SPDX-License-Identifier: BSL-1.0
// Fencing tokens (lock_options::fenced) on real servers: fences strictly increase from holder to
// holder, also across a Redlock quorum and a node restart (with AOF), and a paused holder's late
// write is refused by the protected resource (async_fenced_set).
#include "support/child_process.hpp"
#include "support/lock_helpers.hpp"
#include "support/printing.hpp"
#include "support/redis_server.hpp"
#include "support/run_coro.hpp"
#include <redlock/redlock.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

namespace asio = boost::asio;
namespace data = boost::unit_test::data;
using namespace std::chrono_literals;
using boost::system::error_code;
using redlock::test::eventually;
using redlock::test::lock_config;
using redlock::test::options;
using redlock::test::redis_server;
using redlock::test::run_coro;
using redlock::test::sleep_for;
using redlock::test::start_redis_servers;

namespace {

constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);
const auto node_counts = data::make({1, 5});

redlock::lock_options fenced(std::chrono::milliseconds ttl = 10s, std::chrono::milliseconds wait = 0ms) {
    auto o = options(ttl, wait);
    o.fenced = true;
    return o;
}

redlock::lock_options fenced_reentrant(const redlock::owner_id& owner) {
    auto o = fenced();
    o.reentrant = true;
    o.owner = owner;
    return o;
}

std::string fence_key(const std::string& resource) {
    return "{redlock:" + resource + "}:fence";
}

std::uint64_t counter_on(const redis_server& s, const std::string& resource) {
    auto v = s.command({"GET", fence_key(resource)});
    return v.is_null() ? 0 : std::stoull(v.str);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(fencing_test)

BOOST_DATA_TEST_CASE(each_holder_gets_a_larger_fence, node_counts, n) {
    auto servers = start_redis_servers(static_cast<std::size_t>(n));
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        std::uint64_t last = 0;
        for (int i = 0; i < 20; ++i) {
            auto l = co_await client.async_acquire("f", fenced(), asio::use_awaitable);
            BOOST_TEST(l.fence() > last);
            last = l.fence();
            co_await l.async_release(asio::use_awaitable);
        }
        // A plain lease has no fence; the counter stays after the lock is gone.
        auto plain = co_await client.async_acquire("f", options(), asio::use_awaitable);
        BOOST_TEST(plain.fence() == 0u);
        co_await plain.async_release(asio::use_awaitable);
        BOOST_TEST(co_await eventually([&] {
            for (const auto& s : servers)
                if (counter_on(*s, "f") < 1) return false;
            return true;
        }));
    }());
}

// The nodes' counters disagree: the fence is the largest of the granting quorum, and it is
// written back to a quorum, so a later quorum without the node that had the largest counter
// still numbers the next holder above it (without the write-back it would get 2 or 3).
BOOST_AUTO_TEST_CASE(the_fence_is_written_back_to_a_quorum) {
    auto servers = start_redis_servers(5);
    servers[0]->command({"SET", fence_key("w"), "100"});
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        // Nodes 3 and 4 hung: the granting quorum is nodes 0-2, and node 0 numbers it 101.
        servers[3]->pause();
        servers[4]->pause();
        auto first = co_await client.async_acquire("w", fenced(), asio::use_awaitable);
        BOOST_TEST(first.fence() == 101u);
        for (int i = 0; i < 3; ++i)
            BOOST_TEST(counter_on(*servers[i], "w") == 101u);
        co_await first.async_release(asio::use_awaitable);
        servers[3]->resume();
        servers[4]->resume();

        // Without node 0, a quorum of nodes 1-4 still includes one that was written back.
        servers[0]->pause();
        auto second = co_await client.async_acquire("w", fenced(), asio::use_awaitable);
        BOOST_TEST(second.fence() > first.fence());
        co_await second.async_release(asio::use_awaitable);
        servers[0]->resume();
    }());
}

BOOST_AUTO_TEST_CASE(fenced_sets_refuse_lower_fences) {
    auto servers = start_redis_servers(1);
    asio::io_context ioc;
    redlock::redis::connection_config cc;
    std::string why;
    BOOST_TEST_REQUIRE(!redlock::redis::parse_node_uri(servers[0]->uri(), cc.address, why));
    redlock::redis::connection conn(ioc.get_executor(), cc);
    conn.async_connect([](error_code) {});
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto set = [&](std::uint64_t fence, std::string value) {
            return redlock::async_fenced_set(conn, "data", "data:fence", fence, value, 1000ms,
                                             tuple_awaitable);
        };
        auto [a] = co_await set(5, "five");
        BOOST_TEST(!a, a.message());
        auto [b] = co_await set(5, "five again");  // the same holder writes again
        BOOST_TEST(!b);
        auto [c] = co_await set(4, "four");
        BOOST_TEST((c == redlock::error::stale_fence));
        auto [d] = co_await set(7, "seven");
        BOOST_TEST(!d);
        BOOST_TEST(servers[0]->command({"GET", "data"}).str == "seven");
        BOOST_TEST(servers[0]->command({"GET", "data:fence"}).str == "7");
        servers[0]->command({"DEL", "data:fence"});
        servers[0]->command({"HSET", "data:fence", "not", "a number"});
        auto [e] = co_await set(9, "nine");
        BOOST_TEST((e == redlock::error::server_error));
        BOOST_TEST(servers[0]->command({"GET", "data"}).str == "seven");
    }());
}

// A fenced reentrant hold: every re-entry gets the outer acquisition's fence; the next owner
// gets a larger one.
BOOST_DATA_TEST_CASE(reentries_keep_the_fence_of_the_hold, node_counts, n) {
    auto servers = start_redis_servers(static_cast<std::size_t>(n));
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        const auto me = redlock::owner_id::random();
        const auto other = redlock::owner_id::random();
        auto before = co_await client.async_acquire("v", fenced(), asio::use_awaitable);
        co_await before.async_release(asio::use_awaitable);

        std::vector<redlock::lease> held;
        for (int i = 0; i < 3; ++i)
            held.push_back(co_await client.async_acquire("v", fenced_reentrant(me), asio::use_awaitable));
        BOOST_TEST(held[0].fence() > before.fence());
        BOOST_TEST(held[1].fence() == held[0].fence());
        BOOST_TEST(held[2].fence() == held[0].fence());
        auto [refused, none] = co_await client.async_acquire("v", fenced_reentrant(other), tuple_awaitable);
        BOOST_TEST((refused == redlock::error::not_acquired));
        for (auto& l : held)
            co_await l.async_release(asio::use_awaitable);
        BOOST_TEST(co_await eventually([&] { return redlock::test::no_key_anywhere(servers, "v"); }));

        auto theirs = co_await client.async_acquire("v", fenced_reentrant(other), asio::use_awaitable);
        BOOST_TEST(theirs.fence() > held[0].fence());
        co_await theirs.async_release(asio::use_awaitable);
        auto plain = co_await client.async_acquire("v", fenced(), asio::use_awaitable);
        BOOST_TEST(plain.fence() > theirs.fence());
        co_await plain.async_release(asio::use_awaitable);
    }());
}

// The outer hold is gone from two of five nodes (as if it expired there), and their counters
// ran far ahead: a re-entry starts a new hold on them, numbered 1001, but keeps the fence of the
// hold it entered on the other three, and writes that fence back to the two.
BOOST_AUTO_TEST_CASE(a_reentry_keeps_the_fence_where_the_hold_was_lost_on_a_minority) {
    auto servers = start_redis_servers(5);
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        const auto me = redlock::owner_id::random();
        auto outer = co_await client.async_acquire("x", fenced_reentrant(me), asio::use_awaitable);
        const auto fence = std::to_string(outer.fence());
        auto hold_fence_on = [&](std::size_t i) {
            return servers[i]->command({"HGET", redlock::test::lock_key("x"), "f"}).str;
        };
        BOOST_TEST(co_await eventually([&] {
            for (std::size_t i = 0; i < servers.size(); ++i)
                if (hold_fence_on(i) != fence) return false;
            return true;
        }));
        for (std::size_t i : {3u, 4u}) {
            servers[i]->command({"DEL", redlock::test::lock_key("x")});
            servers[i]->command({"SET", fence_key("x"), "1000"});
        }
        auto inner = co_await client.async_acquire("x", fenced_reentrant(me), asio::use_awaitable);
        BOOST_TEST(inner.fence() == outer.fence());
        BOOST_TEST(
            co_await eventually([&] { return hold_fence_on(3) == fence && hold_fence_on(4) == fence; }));
        BOOST_TEST(counter_on(*servers[3], "x") == 1001u);  // counters never go back
        auto innermost = co_await client.async_acquire("x", fenced_reentrant(me), asio::use_awaitable);
        BOOST_TEST(innermost.fence() == outer.fence());
        co_await innermost.async_release(asio::use_awaitable);
        co_await inner.async_release(asio::use_awaitable);
        co_await outer.async_release(asio::use_awaitable);
        BOOST_TEST(co_await eventually([&] { return redlock::test::no_key_anywhere(servers, "x"); }));
    }());
}

// What the chaos harness found: a hold released everywhere but on two of five nodes (the release
// missed them) is no hold to re-enter. Another owner takes the lock on the other three with a
// larger fence; our owner's next acquisition must be numbered above it, not given the leftover's.
BOOST_AUTO_TEST_CASE(a_leftover_of_our_own_on_a_minority_is_not_reentered) {
    auto servers = start_redis_servers(5);
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), lock_config(servers));
    redlock::client other(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        const auto me = redlock::owner_id::random();
        auto first = co_await client.async_acquire("y", fenced_reentrant(me), asio::use_awaitable);
        const auto first_fence = first.fence();
        BOOST_TEST(co_await eventually([&] {
            return std::all_of(servers.begin(), servers.end(),
                               [](const auto& s) { return redlock::test::key_exists(*s, "y"); });
        }));
        // The release reaches nodes 0-2 only.
        std::vector<std::string> kept;
        for (std::size_t i : {3u, 4u})
            kept.push_back(servers[i]->command({"DUMP", redlock::test::lock_key("y")}).str);
        co_await first.async_release(asio::use_awaitable);
        for (std::size_t i : {3u, 4u})
            servers[i]->command({"RESTORE", redlock::test::lock_key("y"), "10000", kept[i - 3]});

        auto theirs = co_await other.async_acquire("y", fenced_reentrant(redlock::owner_id::random()),
                                                   asio::use_awaitable);
        BOOST_TEST(theirs.fence() > first_fence);
        co_await theirs.async_release(asio::use_awaitable);

        auto again = co_await client.async_acquire("y", fenced_reentrant(me), asio::use_awaitable);
        BOOST_TEST(again.fence() > theirs.fence(), again.fence() << " after " << theirs.fence());
        co_await again.async_release(asio::use_awaitable);
    }());
}

// The other side of that rule: while this client holds the outer lease, a re-entry is one, even
// when the nodes that answer do not show a quorum of the hold (two of its nodes hang, and a third
// lost it): it keeps the outer fence.
BOOST_AUTO_TEST_CASE(a_reentry_under_a_live_lease_keeps_its_fence_when_the_hold_is_out_of_reach) {
    auto servers = start_redis_servers(5);
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        const auto me = redlock::owner_id::random();
        auto outer = co_await client.async_acquire("z", fenced_reentrant(me), asio::use_awaitable);
        BOOST_TEST(co_await eventually([&] {
            return std::all_of(servers.begin(), servers.end(),
                               [](const auto& s) { return redlock::test::key_exists(*s, "z"); });
        }));
        servers[2]->command({"DEL", redlock::test::lock_key("z")});
        servers[3]->pause();
        servers[4]->pause();
        auto [ec, inner] = co_await client.async_acquire("z", fenced_reentrant(me), tuple_awaitable);
        servers[3]->resume();
        servers[4]->resume();
        BOOST_TEST_REQUIRE(!ec, ec.message());
        BOOST_TEST(inner.fence() == outer.fence());
        co_await inner.async_release(asio::use_awaitable);
        co_await outer.async_release(asio::use_awaitable);
    }());
}

// 1,000 acquisitions by 2 processes x 10 coroutines; one node is killed and restarted (AOF,
// appendfsync always) midway. Inside the critical section each holder appends its fence to a
// list on a checker server: the list is in grant order and must strictly increase.
BOOST_DATA_TEST_CASE(fences_strictly_increase_across_processes_and_a_node_restart, node_counts, n) {
    redlock::test::redis_server_options persistent;
    persistent.appendonly = true;
    persistent.appendfsync = "always";
    auto servers = start_redis_servers(static_cast<std::size_t>(n), persistent);
    redis_server checker;
    constexpr int processes = 2, coroutines = 10, rounds = 50;
    std::vector<pid_t> pids;
    for (int p = 0; p < processes; ++p) {
        pids.push_back(redlock::test::spawn_child(
            REDLOCK_CONTENDER_PATH, {"--nodes", redlock::test::node_uris(servers), "--checker", checker.uri(),
                                     "--resource", "fenced", "--coroutines", std::to_string(coroutines),
                                     "--rounds", std::to_string(rounds), "--fenced", "1"}));
    }
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    while (checker.command({"LLEN", "fences"}).integer < 300 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(10ms);
    servers.back()->kill9();
    servers.back()->restart();
    for (auto pid : pids)
        BOOST_TEST(redlock::test::wait_child(pid, 120s) == 0);

    auto list = checker.command({"LRANGE", "fences", "0", "-1"});
    BOOST_TEST(list.elements.size() == static_cast<std::size_t>(processes * coroutines * rounds));
    std::uint64_t previous = 0;
    std::size_t out_of_order = 0;
    for (const auto& e : list.elements) {
        const auto f = std::stoull(e.str);
        out_of_order += f <= previous ? 1 : 0;
        previous = f;
    }
    BOOST_TEST(out_of_order == 0u);
    BOOST_TEST(checker.command({"GET", "counter"}).str == std::to_string(processes * coroutines * rounds));
    BOOST_TEST(checker.command({"GET", "overlaps"}).is_null());
}

// A holder paused (SIGSTOP) past its lease writes late with its old fence: refused, while the
// next holder's write stands.
BOOST_DATA_TEST_CASE(a_paused_holders_late_write_is_refused, node_counts, n) {
    auto servers = start_redis_servers(static_cast<std::size_t>(n));
    redis_server checker;
    constexpr auto ttl = 500ms;
    const pid_t writer = redlock::test::spawn_child(
        REDLOCK_FENCED_WRITER_PATH, {"--nodes", redlock::test::node_uris(servers), "--checker", checker.uri(),
                                     "--resource", "p", "--ttl-ms", std::to_string(ttl.count())});
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    while (checker.command({"GET", "writer:ready"}).is_null() && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(10ms);
    const auto old_fence = std::stoull(checker.command({"GET", "writer:ready"}).str);
    kill(writer, SIGSTOP);

    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), lock_config(servers));
    redlock::redis::connection_config cc;
    std::string why;
    BOOST_TEST_REQUIRE(!redlock::redis::parse_node_uri(checker.uri(), cc.address, why));
    redlock::redis::connection conn(ioc.get_executor(), cc);
    conn.async_connect([](error_code) {});
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        // The paused holder's lease runs out; the next holder gets a larger fence and writes.
        auto l = co_await client.async_acquire("p", fenced(10s, 5s), asio::use_awaitable);
        BOOST_TEST(l.fence() > old_fence);
        auto [ec] = co_await redlock::async_fenced_set(conn, "protected", "protected:fence", l.fence(),
                                                       "second", 1000ms, tuple_awaitable);
        BOOST_TEST(!ec, ec.message());
        co_await l.async_release(asio::use_awaitable);
    }());
    checker.command({"SET", "writer:go", "1"});
    kill(writer, SIGCONT);
    BOOST_TEST(redlock::test::wait_child(writer, 60s) == 0);
    BOOST_TEST(checker.command({"GET", "writer:result"}).str == "stale_fence");
    BOOST_TEST(checker.command({"GET", "protected"}).str == "second");
}

BOOST_AUTO_TEST_SUITE_END()
