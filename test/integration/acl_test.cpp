// SPDX-License-Identifier: BSL-1.0
// The minimal ACL of docs/acl.md: the whole lock API works for a user that has exactly it, and
// a user that lacks a command gets error::server_error with the missing permission named.
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
#include <string>
#include <thread>
#include <vector>

namespace asio = boost::asio;
using namespace std::chrono_literals;
using redlock::test::eventually;
using redlock::test::lock_config;
using redlock::test::options;
using redlock::test::redis_server;
using redlock::test::run_coro;
using redlock::test::sleep_for;
using redlock::test::start_redis_servers;

namespace {

constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);

// docs/acl.md's rule, word for word (a test that the document is right).
const std::vector<std::string> lock_user_rule = {"on",
                                                 ">secret",
                                                 "resetkeys",
                                                 "resetchannels",
                                                 "~{redlock:*",
                                                 "&{redlock:*",
                                                 "-@all",
                                                 "+hello",
                                                 "+auth",
                                                 "+ping",
                                                 "+select",
                                                 "+client|setname",
                                                 "+info",
                                                 "+script|load",
                                                 "+evalsha",
                                                 "+eval",
                                                 "+set",
                                                 "+get",
                                                 "+del",
                                                 "+pttl",
                                                 "+pexpire",
                                                 "+pexpireat",
                                                 "+spublish",
                                                 "+ssubscribe",
                                                 "+sunsubscribe",
                                                 "+wait",
                                                 "+type",
                                                 "+incr",
                                                 "+time",
                                                 "+hset",
                                                 "+hget",
                                                 "+hdel",
                                                 "+hlen",
                                                 "+hexists",
                                                 "+hsetnx",
                                                 "+zadd",
                                                 "+zrem",
                                                 "+zrank",
                                                 "+zscore",
                                                 "+zrange",
                                                 "+zrangebyscore",
                                                 "+zremrangebyscore",
                                                 "+zcard",
                                                 "+exists",
                                                 "+hkeys"};

void add_user(const redis_server& s, const std::string& name, const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"ACL", "SETUSER", name};
    args.insert(args.end(), lock_user_rule.begin(), lock_user_rule.end());
    args.insert(args.end(), extra.begin(), extra.end());
    const auto reply = s.command(args);
    BOOST_TEST_REQUIRE(reply.str == "OK", redlock::resp::to_string(reply));
}

redlock::client_config as_user(const redlock::test::server_list& servers, const std::string& user) {
    auto cfg = lock_config(servers);
    for (auto& uri : cfg.nodes)
        uri.insert(std::string("redis://").size(), user + ":secret@");
    return cfg;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(acl_test)

BOOST_AUTO_TEST_CASE(the_minimal_acl_is_enough_for_every_kind_of_lock) {
    auto servers = start_redis_servers(3);
    for (const auto& s : servers)
        add_user(*s, "locker", {});
    // Up long enough for the quarantine (which needs INFO) to let them vote: max_ttl + drift, and
    // the second that uptime, in whole seconds, may hide (a reading of 3 s: started 2.112 s ago).
    std::this_thread::sleep_for(3100ms);
    auto cfg = as_user(servers, "locker");
    cfg.restart_quarantine = true;
    cfg.max_ttl = 1000ms;
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), cfg);
    redlock::client other(ioc.get_executor(), cfg);
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        // Plain: acquire, extend, a waiter woken by the release (SSUBSCRIBE, SPUBLISH), release.
        redlock::diagnostics diag;
        auto [ec, held] = co_await client.async_acquire("acl", options(900ms), diag, tuple_awaitable);
        BOOST_TEST_REQUIRE(!ec, diag.message);
        co_await held.async_extend(900ms, asio::use_awaitable);
        bool waiter_done = false;
        asio::co_spawn(
            ioc,
            [&]() -> asio::awaitable<void> {
                auto l = co_await other.async_acquire("acl", options(900ms, 5s), asio::use_awaitable);
                co_await l.async_release(asio::use_awaitable);
                waiter_done = true;
            },
            asio::detached);
        // Its first round and the one its confirmed subscription sets off: a release from now on
        // reaches it by the message.
        BOOST_TEST(co_await eventually([&] { return redlock::test::rounds_all_found_held(other, 2); }));
        co_await held.async_release(asio::use_awaitable);
        BOOST_TEST(co_await eventually([&] { return waiter_done; }));
        BOOST_TEST(other.metrics().release_wakeups >= 1u);

        // Reentrant, fenced, with the watchdog past its ttl.
        auto r = options(900ms);
        r.reentrant = true;
        r.owner = redlock::owner_id("me");
        r.fenced = true;
        r.watchdog = true;
        auto outer = co_await client.async_acquire("acl:r", r, asio::use_awaitable);
        auto inner = co_await client.async_acquire("acl:r", r, asio::use_awaitable);
        BOOST_TEST(inner.fence() == outer.fence());
        co_await sleep_for(1200ms);
        BOOST_TEST(outer.held());
        co_await inner.async_release(asio::use_awaitable);
        co_await outer.async_release(asio::use_awaitable);

        // Fair, with a queued waiter.
        auto f = options(900ms, 5s);
        f.fair = true;
        auto first = co_await client.async_acquire("acl:f", f, asio::use_awaitable);
        bool fair_done = false;
        asio::co_spawn(
            ioc,
            [&]() -> asio::awaitable<void> {
                auto l = co_await other.async_acquire("acl:f", f, asio::use_awaitable);
                co_await l.async_release(asio::use_awaitable);
                fair_done = true;
            },
            asio::detached);
        co_await sleep_for(100ms);
        co_await first.async_release(asio::use_awaitable);
        BOOST_TEST(co_await eventually([&] { return fair_done; }));
        // A semaphore: two permits, extended, released.
        auto k = options(900ms);
        k.permits = 2;
        auto p1 = co_await client.async_acquire("acl:k", k, asio::use_awaitable);
        auto p2 = co_await other.async_acquire("acl:k", k, asio::use_awaitable);
        co_await p1.async_extend(900ms, asio::use_awaitable);
        co_await p1.async_release(asio::use_awaitable);
        co_await p2.async_check(asio::use_awaitable);
        co_await p2.async_release(asio::use_awaitable);
        // A read-write lock: two readers, a fenced writer that waits for them (its mark), and an
        // inspection of it.
        auto reader = options(900ms);
        reader.mode = redlock::lock_mode::read;
        auto r1 = co_await client.async_acquire("acl:rw", reader, asio::use_awaitable);
        auto r2 = co_await other.async_acquire("acl:rw", reader, asio::use_awaitable);
        co_await r1.async_extend(900ms, asio::use_awaitable);
        auto writer = options(900ms, 5s);
        writer.mode = redlock::lock_mode::write;
        writer.fenced = true;
        bool wrote = false;
        asio::co_spawn(
            ioc,
            [&]() -> asio::awaitable<void> {
                auto w = co_await other.async_acquire("acl:rw", writer, asio::use_awaitable);
                co_await w.async_release(asio::use_awaitable);
                wrote = true;
            },
            asio::detached);
        co_await sleep_for(100ms);
        auto rw_seen = co_await client.async_inspect("acl:rw", asio::use_awaitable);
        BOOST_TEST(rw_seen.holders.size() == 2u);
        co_await r1.async_release(asio::use_awaitable);
        co_await r2.async_release(asio::use_awaitable);
        BOOST_TEST(co_await eventually([&] { return wrote; }));

        // Inspection of a reentrant lock (HKEYS) and an operator's release.
        auto held_again = co_await client.async_acquire("acl:r", r, asio::use_awaitable);
        auto seen = co_await client.async_inspect("acl:r", asio::use_awaitable);
        BOOST_TEST(seen.owner == "me");
        auto freed = co_await client.async_force_release("acl:r", asio::use_awaitable);
        BOOST_TEST(freed == 3u);

        for (auto* c : {&client, &other}) {
            const auto m = c->metrics();
            BOOST_TEST(m.failed_not_acquired + m.failed_wait_timeout + m.failed_quorum_unreachable +
                           m.failed_validity_expired + m.failed_other ==
                       0u);
        }
    }());
}

BOOST_AUTO_TEST_CASE(a_missing_permission_is_a_server_error_that_names_it) {
    auto servers = start_redis_servers(3);
    for (const auto& s : servers) {
        add_user(*s, "nopublish", {"-spublish"});
        add_user(*s, "noset", {"-set"});
    }
    asio::io_context ioc;
    redlock::client nopublish(ioc.get_executor(), as_user(servers, "nopublish"));
    redlock::client noset(ioc.get_executor(), as_user(servers, "noset"));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        redlock::diagnostics refused;
        auto [ec, none] = co_await noset.async_acquire("acl", options(), refused, tuple_awaitable);
        BOOST_TEST((ec == redlock::error::server_error), ec.message() << ": " << refused.message);
        BOOST_TEST(refused.message.find("no permissions to run the 'set' command") != std::string::npos,
                   refused.message);

        auto held = co_await nopublish.async_acquire("acl", options(), asio::use_awaitable);
        redlock::diagnostics release_diag;
        auto [rec] = co_await held.async_release(release_diag, tuple_awaitable);
        BOOST_TEST((rec == redlock::error::server_error), rec.message() << ": " << release_diag.message);
        // Inside a script Redis names the script and its line, not the command: line 45 of
        // release.lua as sent, with parts/wake_one.lua in place of its include line, is the
        // SPUBLISH of a release that names no waiting client (line 1 is the licence).
        BOOST_TEST(release_diag.message.find("can't run this command") != std::string::npos,
                   release_diag.message);
        BOOST_TEST(release_diag.message.find("@user_script:45. [release.lua]") != std::string::npos,
                   release_diag.message);
    }());
}

// What no retry changes ends a wait at once, with its own error: a wrong password (refused by
// the connection's handshake) and a missing permission (the acquire's own SET). Each waits up to
// 60 s with retries every 5-20 ms: a wait that went on would show in its count of attempts. A
// refusal on too few nodes to matter lets the others grant; beside a node that is down, it is
// waited out like any failure, since the node may come back.
BOOST_AUTO_TEST_CASE(a_refusal_that_stays_ends_the_wait_at_once) {
    auto servers = start_redis_servers(3);
    for (const auto& s : servers)
        add_user(*s, "noset", {"-set"});
    auto wrong = lock_config(servers);
    for (auto& uri : wrong.nodes)
        uri.insert(std::string("redis://").size(), "noset:wrong@");
    auto one_wrong = lock_config(servers);
    one_wrong.nodes[0] = wrong.nodes[0];
    asio::io_context ioc;
    redlock::client wrong_password(ioc.get_executor(), wrong);
    redlock::client noset(ioc.get_executor(), as_user(servers, "noset"));
    redlock::client one_refuses(ioc.get_executor(), one_wrong);
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        redlock::diagnostics diag;
        auto [ec, none] =
            co_await wrong_password.async_acquire("stays", options(10s, 60s), diag, tuple_awaitable);
        BOOST_TEST((ec == redlock::error::auth_failed), ec.message() << ": " << diag.message);
        BOOST_TEST(diag.message.find("WRONGPASS") != std::string::npos, diag.message);
        // The first round may run before the handshake has failed (a timeout, which may pass);
        // the next one knows.
        BOOST_TEST(diag.attempts <= 2u, diag.attempts << ": " << diag.message);

        auto [set_ec, none_either] =
            co_await noset.async_acquire("stays", options(10s, 60s), diag, tuple_awaitable);
        BOOST_TEST((set_ec == redlock::error::server_error), set_ec.message() << ": " << diag.message);
        BOOST_TEST(diag.message.find("no permissions to run the 'set' command") != std::string::npos,
                   diag.message);
        BOOST_TEST(diag.attempts == 1u, diag.attempts << ": " << diag.message);

        // Two of three still grant.
        auto [one_ec, held] =
            co_await one_refuses.async_acquire("stays", options(10s, 60s), diag, tuple_awaitable);
        BOOST_TEST_REQUIRE(!one_ec, diag.message);
        BOOST_TEST(held.nodes_granted() == 2u);
        co_await held.async_release(asio::use_awaitable);

        // With a node down too, no quorum now, but maybe later: the wait goes on to its end.
        servers[2]->stop();
        const auto started = std::chrono::steady_clock::now();
        auto [later_ec, nothing] =
            co_await one_refuses.async_acquire("stays", options(10s, 2s), diag, tuple_awaitable);
        BOOST_TEST((std::chrono::steady_clock::now() - started >= 2s));
        BOOST_TEST((later_ec == redlock::error::quorum_unreachable), later_ec.message()
                                                                         << ": " << diag.message);
        BOOST_TEST(diag.attempts >= 2u, diag.attempts << ": " << diag.message);
    }());
}

// A waiter whose SSUBSCRIBE the ACL refuses (no +ssubscribe) hears no release: it is told once,
// waits by polling, and gets the lock when the holder releases it (a plain and a fair lock).
// The refusal is the SSUBSCRIBE's answer: the subscriber connection stays up (it used to take
// the -NOPERM for a reply nobody asked for, reconnect and subscribe again every 25-50 ms).
BOOST_AUTO_TEST_CASE(a_refused_subscribe_makes_waiters_poll_without_a_reconnect_loop) {
    auto servers = start_redis_servers(3);
    for (const auto& s : servers)
        add_user(*s, "nosubscribe", {"-ssubscribe"});
    asio::io_context ioc;
    redlock::client holder(ioc.get_executor(), lock_config(servers));
    for (const bool fair : {false, true}) {
        BOOST_TEST_CONTEXT("fair " << fair) {
            redlock::client waiter(ioc.get_executor(), as_user(servers, "nosubscribe"));
            auto o = options(10s, 10s);
            o.fair = fair;
            run_coro(ioc, [&]() -> asio::awaitable<void> {
                auto held = co_await holder.async_acquire("sub", o, asio::use_awaitable);
                const auto connections_before = servers[0]->command({"INFO", "stats"}).str;
                redlock::test::background_acquire waiting;
                redlock::diagnostics diag;
                waiting.start(waiter, "sub", o, diag);
                // Long enough for a loop to show: it reconnected every 25-50 ms.
                co_await sleep_for(1000ms);
                BOOST_TEST(!waiting.result.has_value());
                co_await held.async_release(asio::use_awaitable);
                BOOST_TEST_REQUIRE(co_await eventually([&] { return waiting.result.has_value(); }));
                BOOST_TEST(!*waiting.result, diag.message);
                BOOST_TEST(diag.message.find("refused the SSUBSCRIBE (NOPERM") != std::string::npos,
                           diag.message);
                BOOST_TEST(waiter.metrics().release_wakeups == 0u);
                auto connections = [&](const std::string& stats) {
                    const std::string field = "total_connections_received:";
                    return std::stoll(stats.substr(stats.find(field) + field.size()));
                };
                // At most: the waiter's command connection (if it was not up yet), its subscriber
                // connection, and the one this INFO came on (the test's commands connect anew).
                BOOST_TEST(connections(servers[0]->command({"INFO", "stats"}).str) -
                               connections(connections_before) <=
                           3);
                co_await waiting.lease->async_release(asio::use_awaitable);
            }());
        }
    }
}

BOOST_AUTO_TEST_SUITE_END()
