// SPDX-License-Identifier: BSL-1.0
// Every write to a hold carries its expiry. A replica that lacks the hold (its grant lost to
// asynchronous replication, the master cut off) makes the key from whatever write reaches it
// next: without an expiry in the same script, that key never expires, and the replica,
// promoted, holds the lock for good. Each case loses a hold of 10 s to replication, then writes
// to it with a ttl of 2 s, so that no expiry need change on the master.
#include "scripts/scripts_gen.hpp"
#include "support/lock_helpers.hpp"
#include "support/master_and_replica.hpp"
#include "support/printing.hpp"
#include "support/redis_server.hpp"
#include "support/run_coro.hpp"
#include "support/wait_until.hpp"
#include <redlock/redlock.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace asio = boost::asio;
using namespace std::chrono_literals;
using redlock::test::eventually;
using redlock::test::lock_config;
using redlock::test::lock_key;
using redlock::test::master_and_replica;
using redlock::test::options;
using redlock::test::redis_server;
using redlock::test::run_coro;
using redlock::test::wait_until;

namespace {

/// Whether `s` has `token`'s hold in the lock key of `resource`, whatever the key's shape: a
/// plain or fair lock's value, a reentrant hold's field "a:<token>", a permit.
bool holds_on(const redis_server& s, const std::string& resource, const std::string& token) {
    const auto key = lock_key(resource);
    const auto type = s.command({"TYPE", key}).str;
    if (type == "hash") return s.command({"HEXISTS", key, "a:" + token}).integer == 1;
    if (type == "zset") return !s.command({"ZSCORE", key, token}).is_null();
    return s.command({"GET", key}).str == token;
}

/// A reentrant lock of 10 s, owned by "me".
redlock::lock_options reentrant_options() {
    auto o = options(10s);
    o.reentrant = true;
    o.owner = redlock::owner_id("me");
    return o;
}

/// Loses the hold on `resource` to replication: the master keeps it, the replica has none.
asio::awaitable<void> lose_to_replication(master_and_replica& f, const std::string& resource) {
    BOOST_TEST_REQUIRE(redlock::test::unreplicate(f.master, resource) > 0);
    BOOST_TEST_REQUIRE(co_await eventually([&] { return !redlock::test::key_exists(*f.replica, resource); }));
}

/// The replica's copy of the lock key of `resource` expires with what the hold of 10 s had
/// left: not never (PTTL -1), nor within the last write's 2 s.
void check_expiry(const redis_server& replica, const std::string& resource) {
    const auto left = replica.command({"PTTL", lock_key(resource)}).integer;
    BOOST_TEST(left > 2000);
    BOOST_TEST(left <= 10000);
}

/// Once the replica has `token`'s hold, check_expiry.
asio::awaitable<void> check_replica_expiry(master_and_replica& f, const std::string& resource,
                                           const std::string& token) {
    BOOST_TEST_REQUIRE(co_await eventually([&] { return holds_on(*f.replica, resource, token); }));
    check_expiry(*f.replica, resource);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(replica_expiry_test)

BOOST_FIXTURE_TEST_CASE(an_adoption_that_reaches_a_replica_lacking_the_hold_gives_it_an_expiry,
                        master_and_replica) {
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), lock_config(servers));
    redlock::client adopter(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto fair = options(10s);
        fair.fair = true;
        const auto reentrant = reentrant_options();
        auto semaphore = options(10s);
        semaphore.permits = 1;
        const std::vector<std::pair<std::string, redlock::lock_options>> kinds = {
            {"plain", options(10s)}, {"fair", fair}, {"reentrant", reentrant}, {"semaphore", semaphore}};
        for (const auto& [kind, o] : kinds) {
            BOOST_TEST_CONTEXT(kind) {
                auto first = co_await client.async_acquire("x", o, asio::use_awaitable);
                co_await lose_to_replication(*this, "x");
                auto shorter = o;
                shorter.ttl = 2s;
                auto adopted = co_await adopter.async_adopt(first.handover(), shorter, asio::use_awaitable);
                co_await check_replica_expiry(*this, "x", adopted.token());
                co_await adopted.async_release(asio::use_awaitable);
            }
        }
    }());
}

// A second acquisition beside the first: a reentrant lock re-entered by its owner, another
// permit of a semaphore.
BOOST_FIXTURE_TEST_CASE(a_second_acquisition_that_reaches_a_replica_lacking_the_hold_gives_it_an_expiry,
                        master_and_replica) {
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        const auto reentrant = reentrant_options();
        auto semaphore = options(10s);
        semaphore.permits = 2;
        const std::vector<std::pair<std::string, redlock::lock_options>> kinds = {{"re-entry", reentrant},
                                                                                  {"permit", semaphore}};
        for (const auto& [kind, o] : kinds) {
            BOOST_TEST_CONTEXT(kind) {
                auto first = co_await client.async_acquire("x", o, asio::use_awaitable);
                co_await lose_to_replication(*this, "x");
                auto shorter = o;
                shorter.ttl = 2s;
                auto second = co_await client.async_acquire("x", shorter, asio::use_awaitable);
                co_await check_replica_expiry(*this, "x", second.token());
                co_await second.async_release(asio::use_awaitable);
                co_await first.async_release(asio::use_awaitable);
            }
        }
    }());
}

// A Redlock grant whose nodes answered different fences writes the one it settled on back to
// a reentrant hold (its field "f"), which on a replica lacking the hold makes the hash.
BOOST_FIXTURE_TEST_CASE(a_fence_written_back_to_a_replica_lacking_the_hold_gives_it_an_expiry,
                        master_and_replica) {
    const auto key = lock_key("x");
    master.command({"HSET", key, "o", "me", "a:held", "1", "f", "3"});
    master.command({"PEXPIRE", key, "10000"});
    BOOST_TEST_REQUIRE(redlock::test::unreplicate(master, "x") > 0);
    BOOST_TEST_REQUIRE(wait_until([&] { return !redlock::test::key_exists(*replica, "x"); }));
    const auto written = master.command({"EVAL", std::string(redlock::scripts::fence_writeback.source), "2",
                                         key, redlock::test::key_tag("x") + ":fence", "held", "7", "me"});
    BOOST_TEST_REQUIRE(written.integer == 1);
    // The replica's hash has the fence alone: the rest of the hold never reached it.
    BOOST_TEST_REQUIRE(wait_until([&] { return redlock::test::key_exists(*replica, "x"); }));
    check_expiry(*replica, "x");
}

BOOST_AUTO_TEST_SUITE_END()
