// SPDX-License-Identifier: BSL-1.0
// Locks on a master watched by Sentinel (redis-sentinel://): a master, 2 replicas and 3
// sentinels of real redis-servers. The client asks the sentinels where the master is, checks
// its ROLE, follows +switch-master, and does not count the new master's grants until max_ttl
// after a failover.
#include "support/lock_helpers.hpp"
#include "support/printing.hpp"
#include "support/redis_sentinel.hpp"
#include "support/run_coro.hpp"
#include <redlock/redlock.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <string>

namespace asio = boost::asio;
using namespace std::chrono_literals;
using redlock::client_config;
using redlock::test::eventually;
using redlock::test::holder_on;
using redlock::test::options;
using redlock::test::redis_sentinel_group;
using redlock::test::redis_sentinel_options;
using redlock::test::run_coro;

namespace {

constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);

client_config sentinel_config(const std::string& uri) {
    client_config cfg;
    cfg.nodes = {uri};
    cfg.node_timeout = 500ms;
    cfg.connect_timeout = 2000ms;
    cfg.retry = {5ms, 20ms};
    // The fixture's servers start empty a moment before the test (see lock_config).
    cfg.restart_quarantine = false;
    return cfg;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(sentinel_lock_suite)

BOOST_AUTO_TEST_CASE(locks_live_on_the_master_the_sentinels_name) {
    redis_sentinel_group group;
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), sentinel_config(group.uri()));
    redlock::client waiter(ioc.get_executor(), sentinel_config(group.uri()));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto& master = group.master();
        auto lease = co_await client.async_acquire("orders:1", options(10s), asio::use_awaitable);
        BOOST_TEST(holder_on(master, "orders:1") == lease.token());
        BOOST_TEST(client.metrics().nodes.at(0).sentinel_master ==
                   "127.0.0.1:" + std::to_string(master.port()));
        BOOST_TEST(client.metrics().nodes.at(0).sentinel_switches == 0u);
        // A waiter is woken by the release (its subscriber found the master through the sentinels).
        redlock::test::background_acquire next;
        next.start(waiter, "orders:1", options(10s, 10s));
        co_await redlock::test::sleep_for(200ms);
        BOOST_TEST(!next.result.has_value());
        co_await lease.async_release(asio::use_awaitable);
        BOOST_TEST(co_await eventually([&] { return next.result.has_value(); }));
        BOOST_TEST(!next.result.value_or(redlock::error::wait_timeout));
        if (next.lease) co_await next.lease->async_release(asio::use_awaitable);
        BOOST_TEST(holder_on(master, "orders:1").empty());
    }());
}

BOOST_AUTO_TEST_CASE(a_sentinel_that_is_down_is_passed_over) {
    redis_sentinel_group group;
    group.sentinel(0).kill9();
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), sentinel_config(group.uri()));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto lease = co_await client.async_acquire("passed-over", options(10s), asio::use_awaitable);
        BOOST_TEST(holder_on(group.master(), "passed-over") == lease.token());
        co_await lease.async_release(asio::use_awaitable);
    }());
}

BOOST_AUTO_TEST_CASE(a_master_name_no_sentinel_knows_fails_votes_saying_so) {
    redis_sentinel_group group;
    asio::io_context ioc;
    auto uri = group.uri();
    uri = uri.substr(0, uri.find('#')) + "#no-such-master";
    auto cfg = sentinel_config(uri);
    cfg.connect_timeout = 300ms;
    redlock::client client(ioc.get_executor(), cfg);
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        redlock::diagnostics diag;
        auto [ec, none] = co_await client.async_acquire("nowhere", options(2s), diag, tuple_awaitable);
        BOOST_TEST((ec == redlock::error::quorum_unreachable), ec.message());
        BOOST_TEST(diag.message.find("no sentinel named a master for 'no-such-master'") != std::string::npos,
                   diag.message);
        BOOST_TEST(diag.message.find("knows no master by that name") != std::string::npos, diag.message);
    }());
}

// Sentinels that require a password of their own: the URI's credentials are the master's, so
// the password goes in the node's object form (client_config::per_node). Without it no
// sentinel names the master, and the vote fails saying why.
BOOST_AUTO_TEST_CASE(sentinels_with_a_password_of_their_own_take_it_from_the_node_object) {
    redis_sentinel_group group;
    auto& master = group.data_server(0);
    for (std::size_t i = 0; i < group.sentinels(); ++i) {
        const auto ok = group.sentinel(i).command({"ACL", "SETUSER", "default", "resetpass", ">sentinel-pw"});
        BOOST_TEST_REQUIRE(ok.str == "OK", redlock::resp::to_string(ok));
    }
    asio::io_context ioc;
    auto cfg = sentinel_config(group.uri());
    cfg.connect_timeout = 500ms;
    redlock::client refused(ioc.get_executor(), cfg);
    cfg.per_node.resize(1);
    cfg.per_node[0].sentinel_password = "sentinel-pw";
    redlock::client client(ioc.get_executor(), cfg);
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto lease = co_await client.async_acquire("guarded", options(10s), asio::use_awaitable);
        BOOST_TEST(holder_on(master, "guarded") == lease.token());
        co_await lease.async_release(asio::use_awaitable);
        redlock::diagnostics diag;
        auto [ec, none] = co_await refused.async_acquire("guarded", options(2s), diag, tuple_awaitable);
        BOOST_TEST((ec == redlock::error::quorum_unreachable), ec.message());
        BOOST_TEST(diag.message.find("no sentinel named a master") != std::string::npos, diag.message);
        BOOST_TEST(diag.message.find("NOAUTH") != std::string::npos, diag.message);
    }());
}

// SENTINEL FAILOVER while a lease with replicas = 1 is held and a waiter waits for another: the
// old master still runs as a master for a while, but the client follows +switch-master to the
// new one at once, and so does the waiter's subscription. The new master has the lease's key
// (WAIT), so the watchdog keeps it; it is quarantined for max_ttl after the switch, then grants
// again; a rival never gets the held resource; the release on the new master wakes the waiter.
BOOST_AUTO_TEST_CASE(a_failover_is_followed_at_once_and_the_new_master_is_quarantined) {
    redis_sentinel_group group;
    asio::io_context ioc;
    auto cfg = sentinel_config(group.uri());
    cfg.restart_quarantine = true;
    cfg.max_ttl = 5000ms;
    redlock::client client(ioc.get_executor(), cfg);
    redlock::client rival(ioc.get_executor(), cfg);
    run_coro(
        ioc,
        [&]() -> asio::awaitable<void> {
            // The lease's renewals need a replica's WAIT: the other replica follows the new
            // master within a few seconds, inside the 5 s ttl.
            auto o = options(5000ms, 8s);  // waits out the servers' own restart quarantine
            o.watchdog = true;
            o.replicas = 1;
            o.replica_timeout = 500ms;
            auto lease = co_await client.async_acquire("switching", o, asio::use_awaitable);
            // A waiter that polls only every few seconds, subscribed on the old master.
            auto waiter_cfg = sentinel_config(group.uri());
            waiter_cfg.retry = {50ms, 2000ms};
            // Its max_ttl too: the failover quarantine lasts the longest one any client recorded.
            waiter_cfg.max_ttl = cfg.max_ttl;
            redlock::client waiter(ioc.get_executor(), waiter_cfg);
            auto waited = co_await client.async_acquire("waited", o, asio::use_awaitable);
            redlock::test::background_acquire next;
            next.start(waiter, "waited", options(5000ms, 30s));
            co_await redlock::test::sleep_for(300ms);
            BOOST_TEST(!next.result.has_value());
            auto& old_master = group.master();
            auto& promoted = group.failover(false);
            const auto switched_at = std::chrono::steady_clock::now();
            BOOST_TEST(&promoted != &old_master);
            BOOST_TEST(holder_on(promoted, "switching") == lease.token());
            // Quarantined: a grant of the new master does not count until max_ttl has passed.
            // (The first try may meet the connection to the old master as it is dropped.)
            std::string why;
            for (int i = 0; i < 10 && why.find("quarantine") == std::string::npos; ++i) {
                redlock::diagnostics diag;
                auto [refused, none] =
                    co_await client.async_acquire("neighbour", options(1500ms), diag, tuple_awaitable);
                BOOST_TEST((refused == redlock::error::quorum_unreachable), refused.message());
                why = diag.message;
                co_await redlock::test::sleep_for(50ms);
            }
            BOOST_TEST(why.find("quarantine") != std::string::npos, why);
            const auto seen = client.metrics().nodes.at(0);
            BOOST_TEST(seen.sentinel_master == "127.0.0.1:" + std::to_string(promoted.port()));
            BOOST_TEST(seen.sentinel_switches >= 1u);
            auto [denied, none2] =
                co_await rival.async_acquire("switching", options(1500ms), tuple_awaitable);
            BOOST_TEST(!!denied);
            co_await redlock::test::sleep_for(switched_at + cfg.max_ttl + 500ms -
                                              std::chrono::steady_clock::now());
            BOOST_TEST(lease.held());
            BOOST_TEST(holder_on(promoted, "switching") == lease.token());
            auto [still_denied, none3] =
                co_await rival.async_acquire("switching", options(1500ms), tuple_awaitable);
            BOOST_TEST((still_denied == redlock::error::not_acquired), still_denied.message());
            // The new master grants; the old one, still a master until the sentinels convert
            // it, is not asked.
            auto neighbour = co_await client.async_acquire("neighbour", options(5s, 5s), asio::use_awaitable);
            BOOST_TEST(holder_on(promoted, "neighbour") == neighbour.token());
            if (old_master.command({"ROLE"}).elements.at(0).str == "master") {
                BOOST_TEST(holder_on(old_master, "neighbour").empty());
                BOOST_TEST_MESSAGE("the old master was still a master "
                                   << std::chrono::duration_cast<std::chrono::milliseconds>(
                                          std::chrono::steady_clock::now() - switched_at)
                                          .count()
                                   << " ms after the switch");
            }
            co_await neighbour.async_release(asio::use_awaitable);
            co_await lease.async_release(asio::use_awaitable);
            BOOST_TEST(holder_on(promoted, "switching").empty());
            // The waiter's subscription followed the switch: the release on the new master
            // wakes it by its message.
            BOOST_TEST(!next.result.has_value());
            const auto wakeups = waiter.metrics().release_wakeups;
            co_await waited.async_release(asio::use_awaitable);
            BOOST_TEST(co_await eventually([&] { return next.result.has_value(); }, 3s));
            BOOST_TEST(!next.result.value_or(redlock::error::wait_timeout));
            BOOST_TEST(waiter.metrics().release_wakeups > wakeups);
            if (next.lease) co_await next.lease->async_release(asio::use_awaitable);
        }(),
        90s);
}

// The master SIGKILLed while a lease with replicas = 1 is held and a rival keeps trying: the
// sentinels promote a replica after down-after-milliseconds (2 s in the fixture) and their
// election; the client finds it, the watchdog's renewals reach it (it has the key: WAIT), and
// after max_ttl it grants again. The rival never holds the resource.
BOOST_AUTO_TEST_CASE(a_killed_master_fails_over_and_locks_work_again_after_max_ttl) {
    redis_sentinel_group group;
    asio::io_context ioc;
    auto cfg = sentinel_config(group.uri());
    cfg.restart_quarantine = true;
    cfg.max_ttl = 8000ms;
    redlock::client client(ioc.get_executor(), cfg);
    redlock::client rival(ioc.get_executor(), cfg);
    run_coro(
        ioc,
        [&]() -> asio::awaitable<void> {
            // The lease outlives the failover (the watchdog cannot renew before it): 8 s.
            auto o = options(8000ms, 10s);
            o.watchdog = true;
            o.replicas = 1;
            o.replica_timeout = 500ms;
            auto lease = co_await client.async_acquire("killed", o, asio::use_awaitable);
            group.master().kill9();
            const auto killed_at = std::chrono::steady_clock::now();
            int rival_grants = 0;
            // Until a lock is granted again: the promotion, then the quarantine.
            bool granted = false;
            while (!granted && std::chrono::steady_clock::now() - killed_at < 40s) {
                auto [ec, none] = co_await rival.async_acquire("killed", options(1s), tuple_awaitable);
                if (!ec) ++rival_grants;
                auto [other_ec, other] = co_await client.async_acquire("other", options(1s), tuple_awaitable);
                if (!other_ec) {
                    granted = true;
                    co_await other.async_release(asio::use_awaitable);
                }
                co_await redlock::test::sleep_for(100ms);
            }
            BOOST_TEST(granted);
            const auto after = std::chrono::steady_clock::now() - killed_at;
            BOOST_TEST_MESSAGE("granted again "
                               << std::chrono::duration_cast<std::chrono::milliseconds>(after).count()
                               << " ms after the kill");
            // Not before the quarantine of max_ttl on the new master.
            BOOST_TEST(after >= cfg.max_ttl);
            BOOST_TEST(rival_grants == 0);
            auto& promoted = group.master();
            BOOST_TEST(lease.held());
            BOOST_TEST(holder_on(promoted, "killed") == lease.token());
            co_await lease.async_release(asio::use_awaitable);
            BOOST_TEST(holder_on(promoted, "killed").empty());
        }(),
        90s);
}

// The master SIGKILLed with a grant its replicas never got (asynchronous replication), and a
// client started after the promotion: it never saw the switch, meets a master with a long
// uptime, and is still refused for the failover quarantine, which the promoted master itself
// keeps (failover_mark.lua). The holder's lease is lost (its renewals meet no key) before the
// new client holds. With the restart quarantine on and off: the failover quarantine is its own.
// Negative control: a client started then with the failover quarantine off is granted the lock
// while the holder still counts it valid.
BOOST_AUTO_TEST_CASE(a_client_started_after_a_failover_is_refused_for_the_failover_quarantine) {
    for (const bool restart_quarantine : {true, false}) {
        BOOST_TEST_CONTEXT("restart_quarantine " << restart_quarantine) {
            redis_sentinel_group group;
            asio::io_context ioc;
            auto cfg = sentinel_config(group.uri());
            cfg.restart_quarantine = restart_quarantine;
            cfg.max_ttl = 10000ms;
            redlock::client holder(ioc.get_executor(), cfg);
            run_coro(
                ioc,
                [&]() -> asio::awaitable<void> {
                    auto o = options(10000ms, 20s);  // waits out the servers' own restart quarantine
                    o.watchdog = true;
                    auto lease = co_await holder.async_acquire("orders", o, asio::use_awaitable);
                    // Old enough that the restart quarantine has nothing to say of the replica
                    // that will be promoted: only the promotion can keep it from voting.
                    BOOST_TEST(co_await eventually(
                        [&] {
                            for (std::size_t i = 0; i < group.data_servers(); ++i)
                                if (redlock::test::uptime(group.data_server(i)) < cfg.max_ttl + 2s)
                                    return false;
                            return true;
                        },
                        30s));
                    auto& old_master = group.master();
                    BOOST_TEST(redlock::test::unreplicate(old_master, "orders") > 0);
                    BOOST_TEST(co_await eventually([&] {
                        for (std::size_t i = 0; i < group.data_servers(); ++i) {
                            auto& s = group.data_server(i);
                            if (&s != &old_master && !holder_on(s, "orders").empty()) return false;
                        }
                        return true;
                    }));
                    BOOST_TEST(holder_on(old_master, "orders") == lease.token());
                    auto& promoted = group.kill_master_and_wait_for_failover(false);
                    BOOST_TEST(holder_on(promoted, "orders").empty());

                    // Started now: it has seen no master before this one.
                    redlock::client fresh(ioc.get_executor(), cfg);
                    redlock::diagnostics diag;
                    auto [refused, none] =
                        co_await fresh.async_acquire("orders", options(10000ms, 0ms), diag, tuple_awaitable);
                    BOOST_TEST((refused == redlock::error::quorum_unreachable), refused.message());
                    BOOST_TEST(diag.message.find("failover quarantine: it became a master less than max_ttl "
                                                 "ago; it votes in") != std::string::npos,
                               diag.message);
                    if (!restart_quarantine) {
                        // Negative control: without the failover quarantine the promoted master
                        // grants at once what the holder still counts as its own.
                        auto unguarded_cfg = cfg;
                        unguarded_cfg.failover_quarantine = false;
                        redlock::client unguarded(ioc.get_executor(), unguarded_cfg);
                        auto [ec, second] = co_await unguarded.async_acquire("orders", options(10000ms, 0ms),
                                                                             tuple_awaitable);
                        BOOST_TEST(!ec, ec.message());
                        BOOST_TEST((std::chrono::steady_clock::now() < lease.valid_until()),
                                   "the holder's lease was no longer valid at the second grant");
                        if (!ec) co_await second.async_release(asio::use_awaitable);
                    }

                    // Tried until granted: never while the holder's lease is valid.
                    const auto after = co_await redlock::test::rival_granted_after_holder(
                        fresh, "orders", options(10000ms, 0ms), lease);
                    BOOST_TEST(!lease.held());
                    BOOST_TEST((after >= 0ms),
                               "granted " << -after.count() << " ms before the holder's lease ran out");
                }(),
                120s);
        }
    }
}

// A master SIGKILLed during a failover and restarted at once, empty, comes back a master of
// its own; the sentinels make it a replica only 8 s later, and a failover before that picks it
// as it is: REPLICAOF NO ONE on a master keeps its replication ID, so it looks like a master
// that never was a replica, and it lacks the grants made on the master in between. A client
// started after that promotion must still be refused for the failover quarantine. With the
// restart quarantine on (the master old enough that it has nothing to say) and off.
// Negative control: with the failover quarantine off the same client is granted the lock
// while the holder still counts it valid.
BOOST_AUTO_TEST_CASE(a_master_restarted_empty_and_promoted_as_it_was_is_refused_for_the_failover_quarantine) {
    for (const bool restart_quarantine : {true, false}) {
        BOOST_TEST_CONTEXT("restart_quarantine " << restart_quarantine) {
            redis_sentinel_options so;
            so.replicas = 1;
            redis_sentinel_group group(so);
            asio::io_context ioc;
            auto cfg = sentinel_config(group.uri());
            cfg.restart_quarantine = restart_quarantine;
            // With the restart quarantine, short: the restarted master must outlive it before the
            // sentinels convert it.
            cfg.max_ttl = restart_quarantine ? 2000ms : 10000ms;
            const auto ttl = cfg.max_ttl;
            redlock::client holder(ioc.get_executor(), cfg);
            run_coro(
                ioc,
                [&]() -> asio::awaitable<void> {
                    auto& restarted = group.master();
                    auto& second = group.kill_master_and_wait_for_failover(false);
                    auto o = options(ttl, 30s);  // waits out the promotion's own quarantine
                    o.watchdog = true;
                    auto lease = co_await holder.async_acquire("orders", o, asio::use_awaitable);
                    BOOST_TEST(holder_on(second, "orders") == lease.token());

                    restarted.restart();
                    if (restart_quarantine) {
                        BOOST_TEST(co_await eventually(
                            [&] { return redlock::test::uptime(restarted) > cfg.max_ttl + 1s; }, 10s));
                    }
                    BOOST_TEST(restarted.command({"ROLE"}).elements.at(0).str == "master");
                    auto& promoted = group.failover(false);
                    BOOST_TEST_REQUIRE((&promoted == &restarted));
                    // Promoted as it was: nothing in its replication says it became a master.
                    const auto replication = restarted.command({"INFO", "replication"}).str;
                    BOOST_TEST(
                        replication.find("master_replid2:" + std::string(40, '0')) != std::string::npos,
                        replication);
                    BOOST_TEST(holder_on(restarted, "orders").empty());

                    // Started now: it has seen no master before this one.
                    redlock::client fresh(ioc.get_executor(), cfg);
                    redlock::diagnostics diag;
                    auto [refused, none] =
                        co_await fresh.async_acquire("orders", options(ttl, 0ms), diag, tuple_awaitable);
                    BOOST_TEST((refused == redlock::error::quorum_unreachable), refused.message());
                    BOOST_TEST(diag.message.find("failover quarantine: it became a master less than max_ttl "
                                                 "ago; it votes in") != std::string::npos,
                               diag.message);
                    if (!refused) co_await none.async_release(asio::use_awaitable);
                    if (!restart_quarantine) {
                        auto unguarded_cfg = cfg;
                        unguarded_cfg.failover_quarantine = false;
                        redlock::client unguarded(ioc.get_executor(), unguarded_cfg);
                        auto [ec, second_holder] =
                            co_await unguarded.async_acquire("orders", options(ttl, 0ms), tuple_awaitable);
                        BOOST_TEST(!ec, ec.message());
                        BOOST_TEST((std::chrono::steady_clock::now() < lease.valid_until()),
                                   "the holder's lease was no longer valid at the second grant");
                        if (!ec) co_await second_holder.async_release(asio::use_awaitable);
                    }

                    const auto after = co_await redlock::test::rival_granted_after_holder(
                        fresh, "orders", options(ttl, 0ms), lease);
                    BOOST_TEST(!lease.held());
                    BOOST_TEST((after >= 0ms),
                               "granted " << -after.count() << " ms before the holder's lease ran out");
                }(),
                120s);
        }
    }
}

BOOST_AUTO_TEST_SUITE_END()
