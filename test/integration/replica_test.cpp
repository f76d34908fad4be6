// SPDX-License-Identifier: BSL-1.0
// Replica acknowledgement (lock_options::replicas): a single master with one replica.
#include "support/lock_helpers.hpp"
#include "support/master_and_replica.hpp"
#include "support/printing.hpp"
#include "support/redis_server.hpp"
#include "support/run_coro.hpp"
#include <redlock/redlock.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace asio = boost::asio;
using namespace std::chrono_literals;
using boost::system::error_code;
using redlock::test::eventually;
using redlock::test::lock_config;
using redlock::test::lock_key;
using redlock::test::master_and_replica;
using redlock::test::master_reports;
using redlock::test::options;
using redlock::test::redis_server;
using redlock::test::run_coro;
using redlock::test::start_redis_servers;

namespace {

constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);

// A reentrant, a fair and a fenced variant of `o`.
std::vector<std::pair<std::string, redlock::lock_options>> script_kinds(const redlock::lock_options& o) {
    auto reentrant = o;
    reentrant.reentrant = true;
    reentrant.owner = redlock::owner_id("me");
    auto fair = o;
    fair.fair = true;
    auto fenced = o;
    fenced.fenced = true;
    return {{"reentrant", reentrant}, {"fair", fair}, {"fenced", fenced}};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(replica_test)

BOOST_AUTO_TEST_CASE(a_grant_counts_once_the_replica_has_it_and_fails_clearly_without_it) {
    auto servers = start_redis_servers(1);
    auto& master = *servers[0];
    redlock::test::redis_server_options as_replica;
    as_replica.extra_args = {"--replicaof", "127.0.0.1", std::to_string(master.port())};
    auto replica = std::make_unique<redis_server>(as_replica);
    BOOST_TEST_REQUIRE(master_reports(master, "connected_slaves:1"));
    BOOST_TEST_REQUIRE(master_reports(master, "state=online"));

    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto o = options();
        o.replicas = 1;
        o.replica_timeout = 1000ms;
        redlock::diagnostics diag;
        auto [ec, l] = co_await client.async_acquire("r", o, diag, tuple_awaitable);
        BOOST_TEST(!ec, diag.message);
        BOOST_TEST(replica->command({"GET", lock_key("r")}).str == l.token());  // the replica has it
        co_await l.async_release(asio::use_awaitable);
        // Reentrant, fair and fenced locks send WAIT right behind their script. A server that
        // lost its scripts (SCRIPT FLUSH) answers NOSCRIPT: the script goes again as EVAL, and
        // its WAIT with it.
        for (const bool flushed : {false, true}) {
            const std::string resource = flushed ? "f" : "s";
            for (const auto& [kind, ko] : script_kinds(o)) {
                if (flushed) master.command({"SCRIPT", "FLUSH"});
                redlock::diagnostics d;
                auto [e, k] = co_await client.async_acquire(resource, ko, d, tuple_awaitable);
                BOOST_TEST(!e, kind << (flushed ? " after SCRIPT FLUSH: " : ": ") << d.message);
                BOOST_TEST(replica->command({"EXISTS", lock_key(resource)}).integer == 1, kind);
                co_await k.async_release(asio::use_awaitable);
            }
        }

        replica->stop();
        BOOST_TEST_REQUIRE(master_reports(master, "connected_slaves:0"));
        o.replica_timeout = 200ms;
        redlock::diagnostics refused;
        auto [ec2, l2] = co_await client.async_acquire("r", o, refused, tuple_awaitable);
        BOOST_TEST((ec2 == redlock::error::not_replicated), refused.message);
        BOOST_TEST(refused.message.find("WAIT: 0 of 1 replicas") != std::string::npos, refused.message);
        BOOST_TEST(!l2.held());
        BOOST_TEST(co_await eventually([&] { return !redlock::test::key_exists(master, "r"); }));
        for (const auto& [kind, ko] : script_kinds(o)) {
            redlock::diagnostics d;
            auto [e, k] = co_await client.async_acquire("s", ko, d, tuple_awaitable);
            BOOST_TEST((e == redlock::error::not_replicated), kind << ": " << d.message);
            BOOST_TEST(d.message.find("WAIT: 0 of 1 replicas") != std::string::npos,
                       kind << ": " << d.message);
            BOOST_TEST(co_await eventually([&] { return !redlock::test::key_exists(master, "s"); }), kind);
        }
        // The fair lock's queue went with it.
        BOOST_TEST(master.command({"KEYS", "{redlock:s}:queue*"}).elements.empty());

        // Asking for more replicas than there are is the same failure, not a hang.
        o.replicas = 3;
        auto [ec3, l3] = co_await client.async_acquire("r", o, tuple_awaitable);
        BOOST_TEST((ec3 == redlock::error::not_replicated));

        o.replicas = -1;
        auto [ec4, l4] = co_await client.async_acquire("r", o, tuple_awaitable);
        BOOST_TEST((ec4 == redlock::error::invalid_config));
    }());
}

namespace {

redlock::lock_options replicated(redlock::lock_options o) {
    o.replicas = 1;
    o.replica_timeout = 1000ms;
    o.watchdog = false;
    return o;
}

}  // namespace

// An extend counts on a node once its replicas have it: with the replica paused, the extend
// fails (the lease keeps its old validity, as after any failed extend), and succeeds again
// once the replica is back. Before, extends never waited: a failover would bring back the
// older expiry.
BOOST_FIXTURE_TEST_CASE(an_extend_counts_once_the_replica_has_it, master_and_replica) {
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        for (const auto& [kind, o] : script_kinds(replicated(options(5s)))) {
            BOOST_TEST_CONTEXT(kind) {
                auto l = co_await client.async_acquire("e", o, asio::use_awaitable);
                const auto before = l.valid_until();
                replica->pause();
                redlock::diagnostics diag;
                auto [ec] = co_await l.async_extend(20s, diag, tuple_awaitable);
                replica->resume();
                BOOST_TEST((ec == redlock::error::quorum_unreachable), ec.message() << ": " << diag.message);
                BOOST_TEST(diag.message.find("0 of 1 replicas acknowledged the extend") != std::string::npos,
                           diag.message);
                BOOST_TEST((l.valid_until() == before));
                BOOST_TEST(l.held());
                auto [ok] = co_await l.async_extend(20s, diag, tuple_awaitable);
                BOOST_TEST(!ok, diag.message);
                BOOST_TEST(replica->command({"PTTL", lock_key("e")}).integer > 10000);
                co_await l.async_release(asio::use_awaitable);
            }
        }
    }());
}

// A fair hand-off with replicas is taken by the head's next round, whose grant waits for the
// replica: with the replica paused the head does not hold the lock, though the release handed
// it over on the master; once the replica is back, it does.
BOOST_FIXTURE_TEST_CASE(a_fair_hand_off_counts_once_the_replica_has_it, master_and_replica) {
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), lock_config(servers));
    redlock::client waiter(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto o = replicated(options(5s));
        o.fair = true;
        redlock::diagnostics diag;
        auto [ec, holder] = co_await client.async_acquire("h", o, diag, tuple_awaitable);
        BOOST_TEST_REQUIRE(!ec, diag.message);
        redlock::test::background_acquire head;
        auto w = o;
        w.wait = 20s;
        head.start(waiter, "h", w);
        BOOST_TEST_REQUIRE(co_await eventually([&] { return redlock::test::queued(master, "h") == 1; }));
        replica->pause();
        const std::string released = holder.token();
        co_await holder.async_release(asio::use_awaitable);
        // Released (and handed over) on the master. What the lock holds there next is the head's:
        // the hand-off, or its next round's takeover of it, whose grant waits for the replica in
        // vain; which of them a poll sees depends on when it runs.
        BOOST_TEST(co_await eventually([&] { return redlock::test::holder_on(master, "h") != released; }));
        co_await redlock::test::sleep_for(1000ms);
        BOOST_TEST(!head.result.has_value());
        replica->resume();
        BOOST_TEST_REQUIRE(co_await eventually([&] { return head.result.has_value(); }, 10s));
        BOOST_TEST(!*head.result);
        BOOST_TEST(replica->command({"GET", lock_key("h")}).str == head.lease->token());
        co_await head.lease->async_release(asio::use_awaitable);
    }());
}

// An adoption counts on a node once its replicas have the adopter's token: a failover to one
// that missed it would bring the first token back. Without enough replicas it fails, and the
// first lease holds again.
BOOST_FIXTURE_TEST_CASE(an_adoption_counts_once_the_replica_has_the_new_token, master_and_replica) {
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), lock_config(servers));
    redlock::client adopter(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto first = co_await client.async_acquire("h", options(10s), asio::use_awaitable);
        auto short_of_replicas = replicated(options(10s));
        short_of_replicas.replicas = 2;
        short_of_replicas.replica_timeout = 200ms;
        redlock::diagnostics refused;
        auto [failed, none] =
            co_await adopter.async_adopt(first.handover(), short_of_replicas, refused, tuple_awaitable);
        BOOST_TEST((failed == redlock::error::not_replicated), failed.message() << ": " << refused.message);
        // The replica may or may not have acknowledged within the 200 ms: two it cannot be.
        BOOST_TEST(refused.message.find("of 2 replicas acknowledged the adoption") != std::string::npos,
                   refused.message);
        BOOST_TEST(
            co_await eventually([&] { return redlock::test::holder_on(master, "h") == first.token(); }));

        redlock::diagnostics diag;
        auto [ec, adopted] =
            co_await adopter.async_adopt(first.handover(), replicated(options(10s)), diag, tuple_awaitable);
        BOOST_TEST_REQUIRE(!ec, ec.message() << ": " << diag.message);
        BOOST_TEST(replica->command({"GET", lock_key("h")}).str == adopted.token());  // the replica has it
        co_await adopted.async_release(asio::use_awaitable);
    }());
}

BOOST_AUTO_TEST_SUITE_END()
