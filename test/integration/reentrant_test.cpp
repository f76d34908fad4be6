// SPDX-License-Identifier: BSL-1.0
// Reentrant locks (lock_options::reentrant with an owner_id) on real servers, N = 1 and N = 5.
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

#include <chrono>
#include <string>
#include <vector>

namespace asio = boost::asio;
namespace data = boost::unit_test::data;
using namespace std::chrono_literals;
using redlock::test::eventually;
using redlock::test::key_exists;
using redlock::test::lock_config;
using redlock::test::lock_key;
using redlock::test::no_key_anywhere;
using redlock::test::options;
using redlock::test::run_coro;
using redlock::test::sleep_for;
using redlock::test::start_redis_servers;

namespace {

constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);
const auto node_counts = data::make({1, 5});

redlock::lock_options reentrant(const redlock::owner_id& owner, std::chrono::milliseconds ttl = 10s) {
    auto o = options(ttl);
    o.reentrant = true;
    o.owner = owner;
    return o;
}

// Acquisitions the lock holds on one server (its hash has the owner field, a fenced one the
// fence, plus one per acquisition).
std::int64_t depth_on(const redlock::test::redis_server& s, const std::string& resource) {
    auto n = s.command({"HLEN", lock_key(resource)}).integer;
    auto fence = s.command({"HEXISTS", lock_key(resource), "f"}).integer;
    return n > 0 ? n - 1 - fence : 0;
}

bool depth_everywhere(const redlock::test::server_list& servers, const std::string& resource,
                      std::int64_t d) {
    for (const auto& s : servers)
        if (depth_on(*s, resource) != d) return false;
    return true;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(reentrant_test)

BOOST_DATA_TEST_CASE(three_acquisitions_three_releases_and_other_owners_are_refused_throughout,
                     node_counts* data::make({false, true}), n, fenced) {
    auto servers = start_redis_servers(static_cast<std::size_t>(n));
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        const auto me = redlock::owner_id::random();
        const auto other = redlock::owner_id::random();
        auto refused = [&]() -> asio::awaitable<bool> {
            auto [e1, l1] = co_await client.async_acquire("r", reentrant(other), tuple_awaitable);
            auto [e2, l2] = co_await client.async_acquire("r", options(), tuple_awaitable);  // a plain lock
            co_return e1 == redlock::error::not_acquired&& e2 == redlock::error::not_acquired;
        };

        auto mine = reentrant(me);
        mine.fenced = fenced;
        std::vector<redlock::lease> held;
        for (int i = 1; i <= 3; ++i) {
            auto l = co_await client.async_acquire("r", mine, asio::use_awaitable);
            BOOST_TEST(l.held());
            held.push_back(std::move(l));
            BOOST_TEST(co_await eventually([&] { return depth_everywhere(servers, "r", i); }));
            BOOST_TEST(co_await refused());
        }
        BOOST_TEST(held[0].token() != held[1].token());  // each acquisition has its own token

        // Released in any order: the lock stays until the last one.
        for (int i : {1, 0}) {
            co_await held[static_cast<std::size_t>(i)].async_release(asio::use_awaitable);
            BOOST_TEST(co_await eventually([&] { return depth_everywhere(servers, "r", i == 1 ? 2 : 1); }));
            for (const auto& s : servers)
                BOOST_TEST(key_exists(*s, "r"));
            BOOST_TEST(co_await refused());
        }
        co_await held[2].async_release(asio::use_awaitable);
        BOOST_TEST(co_await eventually([&] { return no_key_anywhere(servers, "r"); }));

        // Free again: the other owner gets it, and my releases are now a stranger's.
        auto theirs = co_await client.async_acquire("r", reentrant(other), asio::use_awaitable);
        auto [ec] = co_await held[2].async_release(tuple_awaitable);
        BOOST_TEST(ec == redlock::error::not_owner);
        auto [ec2] = co_await held[0].async_extend(10s, tuple_awaitable);
        BOOST_TEST(ec2 == redlock::error::not_owner);
        BOOST_TEST(theirs.held());
        BOOST_TEST(co_await eventually([&] { return depth_everywhere(servers, "r", 1); }));
        co_await theirs.async_release(asio::use_awaitable);
    }());
}

BOOST_DATA_TEST_CASE(a_stranger_cannot_release_a_reentrant_lock, node_counts, n) {
    auto servers = start_redis_servers(static_cast<std::size_t>(n));
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto first =
            co_await client.async_acquire("s", reentrant(redlock::owner_id("alice")), asio::use_awaitable);
        // The acquire completed at a quorum: let the other nodes' acquisitions land first.
        BOOST_TEST(co_await eventually([&] { return depth_everywhere(servers, "s", 1); }));
        // The key is taken over behind alice's back (e.g. it expired and bob took it).
        for (const auto& s : servers)
            s->command({"DEL", lock_key("s")});
        auto bob =
            co_await client.async_acquire("s", reentrant(redlock::owner_id("bob")), asio::use_awaitable);
        auto [ec] = co_await first.async_release(tuple_awaitable);
        BOOST_TEST(ec == redlock::error::not_owner);
        BOOST_TEST(co_await eventually([&] { return depth_everywhere(servers, "s", 1); }));
        for (const auto& s : servers)
            BOOST_TEST(s->command({"HGET", lock_key("s"), "o"}).str == "bob");
        co_await bob.async_release(asio::use_awaitable);
        BOOST_TEST(co_await eventually([&] { return no_key_anywhere(servers, "s"); }));
    }());
}

BOOST_DATA_TEST_CASE(reentering_never_shortens_the_lease_and_the_watchdog_keeps_nested_scopes, node_counts,
                     n) {
    auto servers = start_redis_servers(static_cast<std::size_t>(n));
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        const auto me = redlock::owner_id::random();
        auto outer = co_await client.async_acquire("t", reentrant(me, 20s), asio::use_awaitable);
        auto inner = co_await client.async_acquire("t", reentrant(me, 1s), asio::use_awaitable);
        co_await inner.async_extend(1s, asio::use_awaitable);
        BOOST_TEST(co_await eventually([&] { return depth_everywhere(servers, "t", 2); }));
        for (const auto& s : servers)
            BOOST_TEST(s->command({"PTTL", lock_key("t")}).integer > 15000);
        co_await inner.async_release(asio::use_awaitable);
        co_await outer.async_release(asio::use_awaitable);
        BOOST_TEST(co_await eventually([&] { return no_key_anywhere(servers, "t"); }));

        // Nested scopes of one owner, each kept alive by its watchdog past the 1 s ttl.
        auto o = reentrant(me, 1s);
        o.renew_every = 250ms;
        auto body = [&](redlock::lease&) -> asio::awaitable<int> {
            auto inner_body = [&](redlock::lease&) -> asio::awaitable<int> {
                co_await sleep_for(1500ms);
                BOOST_TEST(depth_everywhere(servers, "u", 2));
                co_return 2;
            };
            int got = co_await redlock::async_with_lock(client, "u", o, inner_body, asio::use_awaitable);
            co_await sleep_for(1200ms);
            BOOST_TEST(depth_everywhere(servers, "u", 1));
            co_return got + 1;
        };
        BOOST_TEST(co_await redlock::async_with_lock(client, "u", o, body, asio::use_awaitable) == 3);
        BOOST_TEST(co_await eventually([&] { return no_key_anywhere(servers, "u"); }));
        BOOST_TEST(client.metrics().leases_lost == 0u);
    }());
}

BOOST_AUTO_TEST_CASE(owner_and_reentrant_go_together) {
    auto servers = start_redis_servers(1);
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto o = options();
        o.reentrant = true;  // no owner
        auto [e1, l1] = co_await client.async_acquire("v", o, tuple_awaitable);
        BOOST_TEST(e1 == redlock::error::invalid_config);
        o.reentrant = false;
        o.owner = redlock::owner_id("x");  // an owner without reentrant
        auto [e2, l2] = co_await client.async_acquire("v", o, tuple_awaitable);
        BOOST_TEST(e2 == redlock::error::invalid_config);
        o.reentrant = true;
        o.owner = redlock::owner_id(std::string(257, 'x'));
        auto [e3, l3] = co_await client.async_acquire("v", o, tuple_awaitable);
        BOOST_TEST(e3 == redlock::error::invalid_config);
        BOOST_TEST(no_key_anywhere(servers, "v"));
        BOOST_TEST(redlock::owner_id::random().str() != redlock::owner_id::random().str());
        BOOST_TEST(redlock::owner_id::random().str().size() == 32u);
    }());
}

BOOST_AUTO_TEST_SUITE_END()
