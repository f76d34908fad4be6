// SPDX-License-Identifier: BSL-1.0
// Locks on a Redis Cluster (redis-cluster://) of real cluster-mode redis-servers: routed to the
// master of each resource's slot, through a slot migration (ASK, then MOVED), and Redlock over
// several one-master clusters.
#include "redis/cluster_slot.hpp"
#include "support/lock_helpers.hpp"
#include "support/overlapping_pairs.hpp"
#include "support/printing.hpp"
#include "support/redis_cluster.hpp"
#include "support/run_coro.hpp"
#include <redlock/redlock.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <chrono>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace asio = boost::asio;
using namespace std::chrono_literals;
using boost::system::error_code;
using redlock::client_config;
using redlock::redis::detail::key_slot;
using redlock::test::eventually;
using redlock::test::holder_on;
using redlock::test::lock_key;
using redlock::test::names;
using redlock::test::options;
using redlock::test::redis_cluster;
using redlock::test::redis_cluster_options;
using redlock::test::rounds_all_found_held;
using redlock::test::run_coro;

namespace {

constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);

client_config cluster_config(std::vector<std::string> uris) {
    client_config cfg;
    cfg.nodes = std::move(uris);
    cfg.node_timeout = 500ms;
    cfg.connect_timeout = 2000ms;
    cfg.retry = {5ms, 20ms};
    // The fixture's servers start empty a moment before the test (see lock_config).
    cfg.restart_quarantine = false;
    return cfg;
}

std::uint16_t slot_of(const std::string& resource) {
    return key_slot(lock_key(resource));
}

// Another resource whose keys live in `slot`.
std::string resource_in_slot(std::uint16_t slot, const std::string& not_this) {
    for (int i = 0;; ++i) {
        auto r = "peer-" + std::to_string(i);
        if (r != not_this && slot_of(r) == slot) return r;
    }
}

// The server that took over `slot` from `old_master` (SIGKILLed): polled for 40 s at most;
// null if none did.
asio::awaitable<redlock::test::redis_server*> promoted_after_kill(
    redis_cluster& cluster, std::uint16_t slot, const redlock::test::redis_server& old_master) {
    const auto killed_at = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() - killed_at < 40s) {
        try {
            if (auto* now_master = &cluster.master_of_slot(slot); now_master != &old_master)
                co_return now_master;
        } catch (const std::exception&) {
            // No live server names a master for the slot yet.
        }
        co_await redlock::test::sleep_for(100ms);
    }
    co_return nullptr;
}

// Whether `server` has `resource`'s lock key, read without ASKING: an importing node answers
// MOVED to a plain GET of a slot it does not own yet.
bool has_lock_key(redlock::test::redis_server& server, const std::string& resource) {
    const auto keys = server.command({"CLUSTER", "GETKEYSINSLOT", std::to_string(slot_of(resource)), "100"});
    for (const auto& k : keys.elements)
        if (k.str == lock_key(resource)) return true;
    return false;
}

// The first of stem0, stem1, ... whose slot `wanted` takes.
std::string first_with(const std::string& stem, const std::function<bool(std::uint16_t)>& wanted) {
    for (int i = 0;; ++i)
        if (auto r = stem + std::to_string(i); wanted(slot_of(r))) return r;
}

// A master of `cluster` other than `than`; null if it has no other.
redlock::test::redis_server* another_master(redis_cluster& cluster, const redlock::test::redis_server& than) {
    for (auto* m : cluster.masters())
        if (m != &than) return m;
    return nullptr;
}

// The running replica of `master`; null if it has none.
redlock::test::redis_server* replica_of(redis_cluster& cluster, const redlock::test::redis_server& master) {
    for (std::size_t i = 0; i < cluster.size(); ++i) {
        auto& s = cluster.server(i);
        if (!s.running()) continue;
        const auto info = s.command({"INFO", "replication"}).str;
        if (info.find("role:slave") != std::string::npos &&
            info.find("master_port:" + std::to_string(master.port()) + "\r\n") != std::string::npos)
            return &s;
    }
    return nullptr;
}

// Takes `resource` and gives it back; a refusal fails the test with its reason.
asio::awaitable<void> lock_once(redlock::client& client, const std::string& resource) {
    redlock::diagnostics diag;
    auto [ec, lease] = co_await client.async_acquire(resource, options(2s), diag, tuple_awaitable);
    BOOST_TEST(!ec, diag.message);
    if (!ec) co_await lease.async_release(tuple_awaitable);
}

// The metrics of the client's one node.
redlock::node_metrics node_stats(const redlock::client& c, std::size_t i = 0) {
    return c.metrics().nodes.at(i);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(cluster_lock_suite)

BOOST_AUTO_TEST_CASE(locks_live_on_the_master_of_their_slot) {
    redis_cluster cluster;
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), cluster_config({cluster.uri()}));
    redlock::client other(ioc.get_executor(), cluster_config({cluster.uri()}));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        // Resources until every master holds some.
        std::set<unsigned short> masters_used;
        for (int i = 0; i < 40; ++i) {
            const auto resource = "orders:" + std::to_string(i);
            auto lease = co_await client.async_acquire(resource, options(10s), asio::use_awaitable);
            auto& master = cluster.master_of_slot(slot_of(resource));
            masters_used.insert(master.port());
            BOOST_TEST(holder_on(master, resource) == lease.token(), resource);
            // Held: another client is refused.
            auto [ec, none] = co_await other.async_acquire(resource, options(10s), tuple_awaitable);
            BOOST_TEST((ec == redlock::error::not_acquired), resource << ": " << ec.message());
            co_await lease.async_extend(20s, asio::use_awaitable);
            BOOST_TEST(master.command({"PTTL", lock_key(resource)}).integer > 15000, resource);
            co_await lease.async_release(asio::use_awaitable);
            BOOST_TEST(holder_on(master, resource).empty(), resource);
        }
        BOOST_TEST(masters_used.size() == 3u);
        BOOST_TEST(node_stats(client).cluster_masters == 3u);
    }());
}

// Several resources at once on a cluster: their keys lie on several slots, so each call runs
// as one script per slot, in slot order; an acquire refused on a later slot undoes the earlier.
BOOST_AUTO_TEST_CASE(several_resources_on_several_slots_are_taken_all_or_none) {
    redis_cluster cluster;
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), cluster_config({cluster.uri()}));
    redlock::client other(ioc.get_executor(), cluster_config({cluster.uri()}));
    // `low` and `high` on the first and last masters' slots, `beside` on `low`'s slot, and
    // `free_low`, nobody's, on a slot below `high`'s: its step goes first.
    const auto low = first_with("orders:", [](std::uint16_t s) { return s < 5000; });
    const auto high = first_with("orders:", [](std::uint16_t s) { return s > 11000; });
    const auto beside = resource_in_slot(slot_of(low), low);
    const auto free_low = first_with("free:", [&](std::uint16_t s) { return s < slot_of(high); });
    BOOST_REQUIRE(cluster.master_of_slot(slot_of(low)).port() !=
                  cluster.master_of_slot(slot_of(high)).port());
    const auto holder_of = [&](const std::string& r) {
        return holder_on(cluster.master_of_slot(slot_of(r)), r);
    };
    const auto pttl_of = [&](const std::string& r) {
        return cluster.master_of_slot(slot_of(r)).command({"PTTL", lock_key(r)}).integer;
    };
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto o = options(10s);
        o.fenced = true;
        auto all = co_await client.async_acquire_all(names(high, low, beside), o, asio::use_awaitable);
        for (const auto& r : {low, high, beside})
            BOOST_TEST(holder_of(r) == all.token(), r);
        // A fence per resource, each its own counter's.
        BOOST_TEST(all.fences().size() == 3u);
        for (auto f : all.fences())
            BOOST_TEST(f > 0u);

        // Another set that shares `high`: refused at `high`'s step, after `free_low`'s granted,
        // which is then given back.
        redlock::diagnostics diag;
        auto [refused, none] =
            co_await other.async_acquire_all(names(free_low, high), options(10s), diag, tuple_awaitable);
        BOOST_TEST((refused == redlock::error::not_acquired), refused.message());
        BOOST_TEST(co_await eventually([&] { return holder_of(free_low).empty(); }));
        BOOST_TEST(holder_of(high) == all.token());

        // Extend and check go to every slot.
        co_await all.async_extend(20s, asio::use_awaitable);
        for (const auto& r : {low, high, beside})
            BOOST_TEST(pttl_of(r) > 15000, r);
        co_await all.async_check(asio::use_awaitable);

        // A waiter for the overlapping set is woken by the release, and then holds both.
        std::optional<error_code> woken;
        std::optional<redlock::lease> next;
        const auto refused_before = other.metrics().contended;
        other.async_acquire_all(names(free_low, high), options(10s, 10s),
                                [&](error_code ec, redlock::lease l) {
                                    woken = ec;
                                    next.emplace(std::move(l));
                                });
        BOOST_TEST_REQUIRE(co_await eventually([&] { return other.metrics().contended > refused_before; }));
        BOOST_TEST(!woken.has_value());
        // The refused round gives `free_low` back after it is counted as contended.
        BOOST_TEST(co_await eventually([&] { return holder_of(free_low).empty(); }));

        // Handed over to the other client, which releases every slot's part.
        auto adopted = co_await other.async_adopt(all.handover(), o, asio::use_awaitable);
        BOOST_TEST((adopted.fences() == all.fences()));
        co_await adopted.async_release(asio::use_awaitable);
        for (const auto& r : {low, beside})
            BOOST_TEST(holder_of(r).empty(), r);
        BOOST_TEST(co_await eventually([&] { return woken.has_value(); }));
        BOOST_TEST(!woken.value_or(redlock::error::wait_timeout));
        if (next && *next) {
            BOOST_TEST(holder_of(free_low) == next->token());
            BOOST_TEST(holder_of(high) == next->token());
            co_await next->async_release(asio::use_awaitable);
        }
        BOOST_TEST(holder_of(free_low).empty());
        BOOST_TEST(holder_of(high).empty());

        // A lease that lost one slot's key: check and extend say so; the release frees the rest.
        auto again = co_await client.async_acquire_all(names(low, high), options(10s), asio::use_awaitable);
        cluster.master_of_slot(slot_of(high)).command({"DEL", lock_key(high)});
        const auto lost = co_await redlock::test::check_extend_release(again);
        for (const auto& ec : {lost.check, lost.extend, lost.release})
            BOOST_TEST((ec == redlock::error::not_owner), ec.message());
        BOOST_TEST(co_await eventually([&] { return holder_of(low).empty(); }));

        // With replicas to wait for, a cluster's several masters are refused up front.
        auto ro = options(10s);
        ro.replicas = 1;
        redlock::diagnostics replicas_diag;
        auto [replicas_ec, no_lease] =
            co_await client.async_acquire_all(names(low, high), ro, replicas_diag, tuple_awaitable);
        BOOST_TEST((replicas_ec == redlock::error::invalid_config), replicas_ec.message());
        BOOST_TEST(replicas_diag.message.find("is a Redis Cluster") != std::string::npos,
                   replicas_diag.message);
    }());
}

// An acquisition refused at a later slot gives back the earlier slots with a release message:
// a waiter that found one of them held during that brief hold is woken, not left asleep until
// the ttl it was told.
BOOST_AUTO_TEST_CASE(an_acquisition_refused_at_a_later_slot_wakes_the_waiters_of_the_earlier) {
    redis_cluster cluster;
    asio::io_context ioc;
    redlock::client holder(ioc.get_executor(), cluster_config({cluster.uri()}));
    redlock::client taker(ioc.get_executor(), cluster_config({cluster.uri()}));
    // Without a message this waiter would look again only after 8 s (its retry.max_delay).
    auto slow_retry = cluster_config({cluster.uri()});
    slow_retry.retry = {4000ms, 8000ms};
    redlock::client waiter(ioc.get_executor(), slow_retry);
    const auto high = first_with("orders:", [](std::uint16_t s) { return s > 11000; });
    const auto low = first_with("free:", [](std::uint16_t s) { return s < 5000; });
    auto& low_master = cluster.master_of_slot(slot_of(low));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto held = co_await holder.async_acquire(high, options(10s), asio::use_awaitable);
        // The brief hold, standing still: `low` held for 10 s, and a waiter told so.
        low_master.command({"SET", lock_key(low), "brief", "PX", "10000"});
        redlock::test::background_acquire next;
        const auto refused_before = waiter.metrics().contended;
        next.start(waiter, low, options(10s, 10s));
        BOOST_TEST_REQUIRE(co_await eventually([&] { return waiter.metrics().contended > refused_before; }));
        BOOST_TEST(!next.result.has_value());
        // Gone without a message; then an acquisition takes `low` and is refused at `high`.
        low_master.command({"DEL", lock_key(low)});
        auto [refused, none] =
            co_await taker.async_acquire_all(names(low, high), options(10s), tuple_awaitable);
        BOOST_TEST((refused == redlock::error::not_acquired), refused.message());
        // Its give-back wakes the waiter, well before the 8 s it would sleep.
        BOOST_TEST(co_await eventually([&] { return next.result.has_value(); }, 5s));
        BOOST_TEST(!next.result.value_or(redlock::error::wait_timeout));
        if (next.lease && *next.lease) co_await next.lease->async_release(asio::use_awaitable);
        co_await held.async_release(asio::use_awaitable);
    }());
}

// As over single servers (several_resources_test), with each resource on a slot of its own,
// spread over the three masters: no deadlock, no overlap.
BOOST_AUTO_TEST_CASE(overlapping_sets_on_several_slots_in_opposite_orders_never_deadlock_or_overlap) {
    redis_cluster cluster;
    asio::io_context ioc;
    redlock::client first(ioc.get_executor(), cluster_config({cluster.uri()}));
    redlock::client second(ioc.get_executor(), cluster_config({cluster.uri()}));
    const std::vector<std::string> resources{"p0", "p1", "p2", "p3"};
    std::set<std::uint16_t> slots;
    std::set<unsigned short> masters;
    for (const auto& r : resources) {
        slots.insert(slot_of(r));
        masters.insert(cluster.master_of_slot(slot_of(r)).port());
    }
    BOOST_TEST_REQUIRE(slots.size() == 4u);
    BOOST_TEST(masters.size() >= 2u);
    const auto seen = redlock::test::take_overlapping_pairs(ioc, first, second, resources, 15);
    BOOST_TEST_REQUIRE(seen.finished);
    BOOST_TEST(seen.failed == 0);
    BOOST_TEST(seen.held == 8 * 15);
    BOOST_TEST(seen.overlaps == 0);
}

BOOST_AUTO_TEST_CASE(every_kind_of_lock_and_waiting_work_on_a_cluster) {
    redis_cluster cluster;
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), cluster_config({cluster.uri()}));
    redlock::client waiter(ioc.get_executor(), cluster_config({cluster.uri()}));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        // Reentrant and fenced: the hash, the counter and the fence key share the slot.
        auto o = options(10s);
        o.reentrant = true;
        o.fenced = true;
        o.owner = redlock::owner_id("worker-1");
        auto outer = co_await client.async_acquire("jobs:7", o, asio::use_awaitable);
        auto inner = co_await client.async_acquire("jobs:7", o, asio::use_awaitable);
        BOOST_TEST(outer.fence() > 0u);
        co_await inner.async_release(asio::use_awaitable);
        co_await outer.async_release(asio::use_awaitable);

        // A waiter is woken by the holder's release (pub/sub across the cluster), fair or not.
        for (const bool fair : {false, true}) {
            const std::string resource = fair ? "fair:1" : "plain:1";
            auto wo = options(10s, 10s);
            wo.fair = fair;
            auto held = co_await client.async_acquire(resource, wo, asio::use_awaitable);
            redlock::test::background_acquire next;
            const auto refused_before = waiter.metrics().contended;
            next.start(waiter, resource, wo);
            BOOST_TEST_REQUIRE(
                co_await eventually([&] { return waiter.metrics().contended > refused_before; }), resource);
            BOOST_TEST(!next.result.has_value());
            co_await held.async_release(asio::use_awaitable);
            BOOST_TEST(co_await eventually([&] { return next.result.has_value(); }), resource);
            BOOST_TEST(!next.result.value_or(redlock::error::wait_timeout), resource);
            if (next.lease) co_await next.lease->async_release(asio::use_awaitable);
        }

        // A semaphore: its sorted set and its count share the slot.
        auto k = options(10s);
        k.permits = 2;
        auto p1 = co_await client.async_acquire("pool:1", k, asio::use_awaitable);
        auto p2 = co_await waiter.async_acquire("pool:1", k, asio::use_awaitable);
        auto [full, none] = co_await client.async_acquire("pool:1", k, asio::as_tuple(asio::use_awaitable));
        BOOST_TEST(full == redlock::error::not_acquired);
        co_await p1.async_release(asio::use_awaitable);
        co_await p2.async_release(asio::use_awaitable);

        // A read-write lock: holds, modes, marks and the fence share it; a fenced writer waits
        // for two readers (its mark) and is woken by their releases.
        auto ro = options(10s);
        ro.mode = redlock::lock_mode::read;
        auto r1 = co_await client.async_acquire("doc:1", ro, asio::use_awaitable);
        auto r2 = co_await waiter.async_acquire("doc:1", ro, asio::use_awaitable);
        auto wo = options(10s, 10s);
        wo.mode = redlock::lock_mode::write;
        wo.fenced = true;
        redlock::test::background_acquire writer;
        const auto refused_before = waiter.metrics().contended;
        writer.start(waiter, "doc:1", wo);
        BOOST_TEST_REQUIRE(co_await eventually([&] { return waiter.metrics().contended > refused_before; }));
        BOOST_TEST(!writer.result.has_value());
        auto [late, no_reader] =
            co_await client.async_acquire("doc:1", ro, asio::as_tuple(asio::use_awaitable));
        BOOST_TEST(late == redlock::error::not_acquired);  // the writer's mark
        co_await r1.async_release(asio::use_awaitable);
        co_await r2.async_release(asio::use_awaitable);
        BOOST_TEST(co_await eventually([&] { return writer.result.has_value(); }));
        BOOST_TEST(!writer.result.value_or(redlock::error::wait_timeout));
        if (writer.lease) {
            BOOST_TEST(writer.lease->fence() > 0u);
            co_await writer.lease->async_release(asio::use_awaitable);
        }
    }());
}

// A grant's WAIT goes where the grant was made: after an ASK, to the importing master, right
// behind the script. Sent on its own after the grant's reply and routed by the slot map, it went
// to the migrating master, whose replica has whatever that connection wrote: it answered at once
// that the write was replicated, though the importing master's replica was paused and never got
// it. A reentrant lock: a script on one key (an importing master answers TRYAGAIN to a script on
// several keys it does not all have yet, so the fenced, fair, read-write and semaphore kinds get
// no grant there to wait for); the plain lock's pipeline carried its WAIT already.
BOOST_AUTO_TEST_CASE(a_grant_after_an_ask_waits_for_the_replicas_of_the_master_that_made_it) {
    redis_cluster cluster;
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), cluster_config({cluster.uri()}));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        const std::string resource = "asked";
        const auto slot = slot_of(resource);
        auto& from = cluster.master_of_slot(slot);
        auto* to = another_master(cluster, from);
        BOOST_TEST_REQUIRE(to != nullptr);
        auto* to_replica = replica_of(cluster, *to);
        BOOST_TEST_REQUIRE(to_replica != nullptr);
        // The client knows the slot map and is connected to the masters.
        auto warm = co_await client.async_acquire(resource, options(10s), asio::use_awaitable);
        co_await warm.async_release(asio::use_awaitable);

        auto o = options(10s);
        o.replicas = 1;
        o.replica_timeout = 300ms;
        o.reentrant = true;
        o.owner = redlock::owner_id("me");
        cluster.begin_slot_migration(slot, *to);
        to_replica->pause();
        redlock::diagnostics diag;
        auto [ec, l] = co_await client.async_acquire(resource, o, diag, tuple_awaitable);
        to_replica->resume();
        BOOST_TEST((ec == redlock::error::not_replicated), ec.message() << ": " << diag.message);
        BOOST_TEST(diag.message.find("WAIT: 0 of 1 replicas") != std::string::npos, diag.message);
        BOOST_TEST(!l.held());
        BOOST_TEST(node_stats(client).cluster_asked >= 1u);

        // With its replica back, the same grant counts.
        auto [ok, held] = co_await client.async_acquire(resource, o, diag, tuple_awaitable);
        BOOST_TEST(!ok, diag.message);
        BOOST_TEST(has_lock_key(*to, resource));
        BOOST_TEST(held.held());
    }());
}

// Renewals batched for one slot while the slot is being migrated and some of their keys have
// moved: the server refuses the batch with TRYAGAIN until the migration ends (which may take
// longer than the leases have, or never come if it stalls). Each renewal goes again alone, served
// where its key is, and every lease is kept.
BOOST_AUTO_TEST_CASE(renewals_batched_in_a_half_migrated_slot_go_again_one_by_one) {
    redis_cluster_options o;
    o.replicas_per_master = 0;
    redis_cluster cluster(o);
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), cluster_config({cluster.uri()}));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        using namespace asio::experimental::awaitable_operators;
        const std::string moved = "half-migrated";
        const auto slot = slot_of(moved);
        const auto stayed = resource_in_slot(slot, moved);
        auto& from = cluster.master_of_slot(slot);
        auto* to = another_master(cluster, from);
        BOOST_TEST_REQUIRE(to != nullptr);
        auto first = co_await client.async_acquire(moved, options(10s), asio::use_awaitable);
        auto second = co_await client.async_acquire(stayed, options(10s), asio::use_awaitable);
        cluster.begin_slot_migration(slot, *to);
        const auto migrated = from.command(
            {"MIGRATE", "127.0.0.1", std::to_string(to->port()), "", "0", "5000", "KEYS", lock_key(moved)});
        BOOST_TEST_REQUIRE(migrated.str == "OK", redlock::resp::to_string(migrated));
        BOOST_TEST_REQUIRE(has_lock_key(*to, moved));
        BOOST_TEST_REQUIRE(has_lock_key(from, stayed));
        // Both leave within the batcher's window: one script call for the two keys of the slot.
        const auto extend = [](redlock::lease& l) -> asio::awaitable<error_code> {
            auto [ec] = co_await l.async_extend(20s, tuple_awaitable);
            co_return ec;
        };
        const auto [first_extended, second_extended] = co_await (extend(first) && extend(second));
        BOOST_TEST(!first_extended, first_extended.message());
        BOOST_TEST(!second_extended, second_extended.message());
        // Refused once, and split at once: not sent again and again until the node timeout.
        BOOST_TEST(node_stats(client).cluster_tryagain == 1u);
        // Each key was extended where it was (read once the migration ends: until then the
        // target serves the slot only after ASKING).
        cluster.migrate_slot_keys(slot);
        cluster.finish_slot_migration(slot);
        BOOST_TEST(to->command({"PTTL", lock_key(moved)}).integer > 10000);
        BOOST_TEST(to->command({"PTTL", lock_key(stayed)}).integer > 10000);
        co_await first.async_release(tuple_awaitable);
        co_await second.async_release(tuple_awaitable);
    }());
}

BOOST_AUTO_TEST_CASE(a_slot_migrates_while_its_locks_are_held_and_taken) {
    redis_cluster cluster;
    asio::io_context ioc;
    auto cfg = cluster_config({cluster.uri()});
    std::vector<redlock::event> redirects;
    cfg.on_event = [&](const redlock::event& e) {
        if (e.kind == redlock::event_kind::cluster_redirect) redirects.push_back(e);
    };
    redlock::client client(ioc.get_executor(), cfg);
    redlock::client rival(ioc.get_executor(), cluster_config({cluster.uri()}));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        const std::string held_resource = "migrating";
        const auto slot = slot_of(held_resource);
        const std::string taken_resource = resource_in_slot(slot, held_resource);
        auto& from = cluster.master_of_slot(slot);
        auto* to = another_master(cluster, from);
        BOOST_REQUIRE(to != nullptr);

        auto held = co_await client.async_acquire(held_resource, options(10s), asio::use_awaitable);
        cluster.begin_slot_migration(slot, *to);
        // The slot is migrating: a key the source lacks is served by the target after ASKING.
        auto taken = co_await client.async_acquire(taken_resource, options(10s), asio::use_awaitable);
        BOOST_TEST(has_lock_key(*to, taken_resource));
        BOOST_TEST(!has_lock_key(from, taken_resource));
        BOOST_TEST(node_stats(client).cluster_asked >= 1u);
        // Told as an event too: the slot and the server it was asked at.
        const auto asked_there =
            "ASK slot " + std::to_string(slot) + " to 127.0.0.1:" + std::to_string(to->port());
        BOOST_TEST(co_await eventually([&] {
            return std::any_of(redirects.begin(), redirects.end(),
                               [&](const redlock::event& e) { return e.detail == asked_there; });
        }));
        BOOST_TEST(redirects.front().node == 0u);
        BOOST_TEST(redirects.front().node_name == cluster.uri());
        // The held key is still on the source: its extend is served there.
        co_await held.async_extend(10s, asio::use_awaitable);

        cluster.migrate_slot_keys(slot);
        BOOST_TEST(has_lock_key(*to, held_resource));
        BOOST_TEST(!has_lock_key(from, held_resource));
        // Its keys have moved: the source answers ASK for them, and the rival is still refused.
        co_await held.async_extend(10s, asio::use_awaitable);
        auto [refused, none] = co_await rival.async_acquire(held_resource, options(10s), tuple_awaitable);
        BOOST_TEST((refused == redlock::error::not_acquired), refused.message());

        const auto maps_read = node_stats(client).cluster_refreshes;
        cluster.finish_slot_migration(slot);
        // The target owns the slot: the source answers MOVED, and the client follows, unless
        // its slot map, read every 5 s, was read since (a slow run) and sends it there at once.
        co_await held.async_extend(10s, asio::use_awaitable);
        const auto after_finish = node_stats(client);
        BOOST_TEST((after_finish.cluster_moved >= 1u || after_finish.cluster_refreshes > maps_read),
                   "moved " << after_finish.cluster_moved << ", maps read " << maps_read << " then "
                            << after_finish.cluster_refreshes);
        if (after_finish.cluster_moved >= 1u) {
            const auto moved_there =
                "MOVED slot " + std::to_string(slot) + " to 127.0.0.1:" + std::to_string(to->port());
            BOOST_TEST(co_await eventually([&] {
                return std::any_of(redirects.begin(), redirects.end(),
                                   [&](const redlock::event& e) { return e.detail == moved_there; });
            }));
        }
        auto [again, none2] = co_await rival.async_acquire(taken_resource, options(10s), tuple_awaitable);
        BOOST_TEST((again == redlock::error::not_acquired), again.message());
        BOOST_TEST(holder_on(*to, held_resource) == held.token());
        BOOST_TEST(holder_on(*to, taken_resource) == taken.token());
        co_await taken.async_release(asio::use_awaitable);
        co_await held.async_release(asio::use_awaitable);
        BOOST_TEST(holder_on(*to, held_resource).empty());
        BOOST_TEST(holder_on(*to, taken_resource).empty());
        // Free again: the rival takes both.
        auto after = co_await rival.async_acquire(held_resource, options(10s), asio::use_awaitable);
        BOOST_TEST(holder_on(*to, held_resource) == after.token());
        co_await after.async_release(asio::use_awaitable);
        const auto stats = node_stats(client);
        BOOST_TEST_MESSAGE("moved " << stats.cluster_moved << ", asked " << stats.cluster_asked
                                    << ", tryagain " << stats.cluster_tryagain << ", maps read "
                                    << stats.cluster_refreshes);
    }());
}

// Waiting by sharded pub/sub: a waiter's channel is subscribed on the master of its slot only
// (where the release's SPUBLISH goes), and follows the slot when it migrates: the old master
// drops the subscription (its sunsubscribe), the client subscribes on the new one, and the
// release there wakes the waiter by its message.
BOOST_AUTO_TEST_CASE(a_waiters_channel_lives_on_its_slots_master_and_follows_a_migration) {
    redis_cluster_options co;
    co.replicas_per_master = 0;
    redis_cluster cluster(co);
    asio::io_context ioc;
    redlock::client holder(ioc.get_executor(), cluster_config({cluster.uri()}));
    redlock::client waiter(ioc.get_executor(), cluster_config({cluster.uri()}));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        const std::string resource = "waited";
        const std::string channel = "{redlock:" + resource + "}:released";
        const auto slot = slot_of(resource);
        auto subscribers = [&](redlock::test::redis_server& s) {
            return s.command({"PUBSUB", "SHARDNUMSUB", channel}).elements.at(1).integer;
        };
        auto subscribed_only_on = [&](redlock::test::redis_server& owner) {
            for (auto* m : cluster.masters())
                if (subscribers(*m) != (m == &owner ? 1 : 0)) return false;
            return true;
        };
        auto& from = cluster.master_of_slot(slot);
        auto* to = another_master(cluster, from);
        BOOST_REQUIRE(to != nullptr);

        auto held = co_await holder.async_acquire(resource, options(20s), asio::use_awaitable);
        // The waiter looks again by itself only when the holder's key would expire: a timed
        // round on its way as the holder releases would take the lock before the message.
        auto waiting = options(20s, 30s);
        waiting.retry = redlock::retry_config{10s, 20s};
        redlock::test::background_acquire next;
        next.start(waiter, resource, waiting);
        // A first round, then the round that each confirmed subscription sets off, which could
        // otherwise take the lock just after the release and leave its message unheard.
        BOOST_TEST(co_await eventually(
            [&] { return subscribed_only_on(from) && rounds_all_found_held(waiter, 2); }));

        cluster.move_slot(slot, *to);
        BOOST_TEST(co_await eventually(
            [&] { return subscribed_only_on(*to) && rounds_all_found_held(waiter, 3); }, 10s));
        BOOST_TEST(!next.result.has_value());
        co_await held.async_release(asio::use_awaitable);
        // Woken by the message: without it the waiter would sleep until the holder's ttl ran out.
        BOOST_TEST(co_await eventually([&] { return next.result.has_value(); }, 5s));
        BOOST_TEST(!next.result.value_or(redlock::error::wait_timeout));
        BOOST_TEST(waiter.metrics().release_wakeups >= 1u);
        BOOST_TEST(holder_on(*to, resource) == (next.lease ? next.lease->token() : "none"));
        if (next.lease) co_await next.lease->async_release(asio::use_awaitable);
    }());
}

// A coordinated failover (CLUSTER FAILOVER) while a lease is held with replicas = 1: the
// replica has the grant, so the watchdog keeps the lease on the promoted master. The promoted
// master does not grant anything for max_ttl (failover quarantine): it may lack grants of its
// old master that no WAIT covered.
BOOST_AUTO_TEST_CASE(a_failover_keeps_replicated_leases_and_quarantines_the_promoted_master) {
    redis_cluster cluster;
    asio::io_context ioc;
    auto cfg = cluster_config({cluster.uri()});
    cfg.restart_quarantine = true;
    cfg.max_ttl = 2000ms;
    redlock::client rival(ioc.get_executor(), cfg);
    std::vector<redlock::event> heard;
    cfg.on_event = [&](const redlock::event& e) {
        if (e.kind == redlock::event_kind::node_quarantined || e.kind == redlock::event_kind::node_voting)
            heard.push_back(e);
    };
    redlock::client client(ioc.get_executor(), cfg);
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        const std::string resource = "failing-over";
        const std::string neighbour = resource_in_slot(slot_of(resource), resource);
        auto o = options(1500ms, 5s);  // waits out the servers' own restart quarantine
        o.watchdog = true;
        o.replicas = 1;
        o.replica_timeout = 500ms;
        auto lease = co_await client.async_acquire(resource, o, asio::use_awaitable);
        auto& old_master = cluster.master_of_slot(slot_of(resource));

        auto& promoted = cluster.failover(old_master);
        BOOST_TEST(&promoted != &old_master);
        BOOST_TEST(holder_on(promoted, resource) == lease.token());
        // The client learns of the promotion from the old master's MOVED or from its next read of
        // the slot map, whichever comes first (failover() blocked this thread a while).
        // The promoted master is quarantined: a grant there does not count yet.
        redlock::diagnostics diag;
        auto [refused, none] =
            co_await client.async_acquire(neighbour, options(1500ms), diag, tuple_awaitable);
        BOOST_TEST((refused == redlock::error::quorum_unreachable), refused.message());
        BOOST_TEST(diag.message.find("failover quarantine") != std::string::npos, diag.message);
        // The rival never gets the held resource, during the quarantine or after it.
        auto [denied, none2] = co_await rival.async_acquire(resource, options(1500ms), tuple_awaitable);
        BOOST_TEST(!!denied);
        co_await redlock::test::sleep_for(2500ms);
        BOOST_TEST(lease.held());
        BOOST_TEST(holder_on(promoted, resource) == lease.token());
        auto [still_denied, none3] = co_await rival.async_acquire(resource, options(1500ms), tuple_awaitable);
        BOOST_TEST((still_denied == redlock::error::not_acquired), still_denied.message());
        // Past max_ttl the promoted master grants again.
        auto neighbour_lease = co_await client.async_acquire(neighbour, options(1500ms), asio::use_awaitable);
        BOOST_TEST(holder_on(promoted, neighbour) == neighbour_lease.token());
        // The promoted master's quarantine was told, and then that it votes again.
        const auto promoted_master = "master 127.0.0.1:" + std::to_string(promoted.port());
        BOOST_TEST(co_await eventually([&] {
            return std::any_of(heard.begin(), heard.end(), [&](const redlock::event& e) {
                return e.kind == redlock::event_kind::node_voting && e.detail == promoted_master;
            });
        }));
        const auto quarantined = std::find_if(heard.begin(), heard.end(), [&](const redlock::event& e) {
            return e.kind == redlock::event_kind::node_quarantined &&
                   e.detail.starts_with(promoted_master + ": failover quarantine");
        });
        BOOST_TEST((quarantined != heard.end()), heard.size() << " quarantine and voting events");
        co_await neighbour_lease.async_release(asio::use_awaitable);
        co_await lease.async_release(asio::use_awaitable);
        BOOST_TEST(holder_on(promoted, resource).empty());
    }());
}

// A master SIGKILLed while a lease is held with replicas = 1 and a rival keeps trying. The
// cluster promotes the replica after cluster-node-timeout (5 s in the fixture); the watchdog's
// renewals fail meanwhile and are retried. The promoted master has the key (WAIT) but no
// replica of its own: its renewals reach it and are not confirmed (not_replicated) until the
// killed server is back as its replica; then they count again and the lease, whose ttl outlasts
// all of it, is kept. The rival never holds it.
BOOST_AUTO_TEST_CASE(a_killed_master_fails_over_and_the_watchdog_keeps_the_lease) {
    redis_cluster cluster;
    asio::io_context ioc;
    auto cfg = cluster_config({cluster.uri()});
    cfg.max_ttl = 60s;
    redlock::client client(ioc.get_executor(), cfg);
    redlock::client rival(ioc.get_executor(), cfg);
    run_coro(
        ioc,
        [&]() -> asio::awaitable<void> {
            const std::string resource = "killed";
            const auto slot = slot_of(resource);
            auto o = options(30s);
            o.watchdog = true;
            o.replicas = 1;
            o.replica_timeout = 500ms;
            auto lease = co_await client.async_acquire(resource, o, asio::use_awaitable);
            auto* old_master = &cluster.master_of_slot(slot);
            old_master->kill9();
            const auto killed_at = std::chrono::steady_clock::now();
            int rival_grants = 0;
            redlock::test::redis_server* promoted = nullptr;
            while (!promoted && std::chrono::steady_clock::now() - killed_at < 40s) {
                auto [ec, none] = co_await rival.async_acquire(resource, options(2s), tuple_awaitable);
                if (!ec) ++rival_grants;
                try {
                    auto* now_master = &cluster.master_of_slot(slot);
                    if (now_master != old_master) promoted = now_master;
                } catch (const std::exception&) {
                    // No live server names a master for the slot yet.
                }
                co_await redlock::test::sleep_for(100ms);
            }
            BOOST_REQUIRE(promoted != nullptr);
            BOOST_TEST_MESSAGE("promoted " << std::chrono::duration_cast<std::chrono::milliseconds>(
                                                  std::chrono::steady_clock::now() - killed_at)
                                                  .count()
                                           << " ms after the kill");
            // The killed server comes back as the promoted master's replica.
            old_master->restart();
            // A renewal reached the promoted master: its key lives for the full ttl again.
            BOOST_TEST(co_await eventually(
                [&] {
                    return promoted->command({"PTTL", lock_key(resource)}).integer > 27000;
                },
                15s));
            BOOST_TEST(lease.held());
            BOOST_TEST(holder_on(*promoted, resource) == lease.token());
            auto [denied, none] = co_await rival.async_acquire(resource, options(2s), tuple_awaitable);
            BOOST_TEST((denied == redlock::error::not_acquired), denied.message());
            BOOST_TEST(rival_grants == 0);
            // Its renewals count again once the replica acknowledges them: past the validity the
            // lease had at the kill, it is still held.
            co_await redlock::test::sleep_for(std::max(std::chrono::steady_clock::duration(1s),
                                                       killed_at + 31s - std::chrono::steady_clock::now()));
            BOOST_TEST(lease.held());
            redlock::diagnostics diag;
            auto [released] = co_await lease.async_release(diag, tuple_awaitable);
            BOOST_TEST(!released, released.message() << ": " << diag.message);
            BOOST_TEST(holder_on(*promoted, resource).empty());
        }(),
        120s);
}

// A waiter waits while the master of its resource's slot is SIGKILLed: once the replica took
// over, the waiter's subscription moves to it (the client checks its channels against the slot
// map), and the holder's release there wakes the waiter by its message. The waiter polls only
// every few seconds (retry.max_delay 2 s), so the message is what wakes it.
BOOST_AUTO_TEST_CASE(a_waiter_follows_its_channel_through_a_failover) {
    redis_cluster cluster;
    asio::io_context ioc;
    redlock::client holder(ioc.get_executor(), cluster_config({cluster.uri()}));
    auto slow_poll = cluster_config({cluster.uri()});
    slow_poll.retry = {50ms, 2000ms};
    // Granted by the promoted master a moment after the failover: the holder's grant reached
    // the replica (replicas = 1), and what is tested is the channel, not the quarantine.
    slow_poll.failover_quarantine = false;
    redlock::client waiter(ioc.get_executor(), slow_poll);
    run_coro(
        ioc,
        [&]() -> asio::awaitable<void> {
            const std::string resource = "waited-through-failover";
            const std::string channel = "{redlock:" + resource + "}:released";
            const auto slot = slot_of(resource);
            auto subscribers = [&](redlock::test::redis_server& s) {
                return s.command({"PUBSUB", "SHARDNUMSUB", channel}).elements.at(1).integer;
            };
            auto o = options(30s);
            o.replicas = 1;  // the grant reaches the replica before it counts
            o.replica_timeout = 500ms;
            auto held = co_await holder.async_acquire(resource, o, asio::use_awaitable);
            auto* old_master = &cluster.master_of_slot(slot);
            redlock::test::background_acquire next;
            next.start(waiter, resource, options(10s, 60s));
            BOOST_TEST(co_await eventually([&] { return subscribers(*old_master) == 1; }));

            old_master->kill9();
            auto* promoted = co_await promoted_after_kill(cluster, slot, *old_master);
            BOOST_REQUIRE(promoted != nullptr);
            BOOST_TEST(co_await eventually([&] { return subscribers(*promoted) == 1; }, 10s));
            BOOST_TEST(!next.result.has_value());
            const auto wakeups_before = waiter.metrics().release_wakeups;
            co_await held.async_release(asio::use_awaitable);
            BOOST_TEST(co_await eventually([&] { return next.result.has_value(); }, 3s));
            BOOST_TEST(!next.result.value_or(redlock::error::wait_timeout));
            BOOST_TEST(waiter.metrics().release_wakeups > wakeups_before);
            if (next.lease) {
                BOOST_TEST(holder_on(*promoted, resource) == next.lease->token());
                co_await next.lease->async_release(asio::use_awaitable);
            }
        }(),
        90s);
}

// A close completes once every master has answered what was sent to it before, not only the
// master of slot 0. A waiting acquire on another master's resource is cleaned up at the close
// (a release on its way there); that master is paused, and the close waits until it runs
// again and answers.
BOOST_AUTO_TEST_CASE(a_close_waits_for_the_replies_of_every_master) {
    redis_cluster_options no_replicas;
    no_replicas.replicas_per_master = 0;
    redis_cluster cluster(no_replicas);
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), cluster_config({cluster.uri()}));
    redlock::client holder(ioc.get_executor(), cluster_config({cluster.uri()}));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto& first = cluster.master_of_slot(0);
        const auto resource = first_with(
            "elsewhere-", [&](std::uint16_t slot) { return &cluster.master_of_slot(slot) != &first; });
        auto& theirs = cluster.master_of_slot(slot_of(resource));
        // The client talks to slot 0's master too.
        const auto on_first =
            first_with("first-", [&](std::uint16_t slot) { return &cluster.master_of_slot(slot) == &first; });
        auto warm = co_await client.async_acquire(on_first, options(10s), asio::use_awaitable);
        co_await warm.async_release(asio::use_awaitable);
        auto held = co_await holder.async_acquire(resource, options(10s), asio::use_awaitable);
        std::optional<error_code> waited;
        client.async_acquire(resource, options(10s, 10s),
                             [&](error_code ec, redlock::lease) { waited = ec; });
        BOOST_TEST(co_await eventually([&] { return client.metrics().contended >= 1u; }));

        theirs.pause();
        bool resumed = false;
        asio::co_spawn(
            ioc,
            [&]() -> asio::awaitable<void> {
                co_await redlock::test::sleep_for(500ms);
                resumed = true;
                theirs.resume();
            },
            asio::detached);
        auto [closed] = co_await client.async_close(tuple_awaitable);
        BOOST_TEST(!closed, closed.message());
        BOOST_TEST(resumed);  // the paused master's reply came before the close completed
        // Had the close not waited, the master runs again before the holder's release below.
        BOOST_TEST(co_await eventually([&] { return resumed; }));
        BOOST_TEST((waited == error_code(asio::error::operation_aborted)));
        BOOST_TEST(holder_on(theirs, resource) == held.token());
        co_await held.async_release(asio::use_awaitable);
    }());
}

BOOST_AUTO_TEST_CASE(redlock_over_three_one_master_clusters) {
    redis_cluster_options one;
    one.masters = 1;
    one.replicas_per_master = 0;
    redis_cluster a(one), b(one), c(one);
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), cluster_config({a.uri(), b.uri(), c.uri()}));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto lease = co_await client.async_acquire("shared", options(10s), asio::use_awaitable);
        BOOST_TEST(lease.nodes_granted() >= 2u);
        // The third may answer after the quorum decided: it still takes the token.
        BOOST_TEST(co_await eventually([&] {
            for (auto* cluster : {&a, &b, &c})
                if (holder_on(cluster->server(0), "shared") != lease.token()) return false;
            return true;
        }));
        co_await lease.async_release(asio::use_awaitable);

        // One cluster down: two of three still make a quorum.
        c.server(0).stop();
        auto again = co_await client.async_acquire("shared", options(10s), asio::use_awaitable);
        BOOST_TEST(again.nodes_granted() == 2u);
        for (auto* cluster : {&a, &b})
            BOOST_TEST(holder_on(cluster->server(0), "shared") == again.token());
        co_await again.async_release(asio::use_awaitable);
    }());
}

BOOST_AUTO_TEST_CASE(a_seed_that_is_not_a_cluster_fails_votes_with_its_reason) {
    redlock::test::redis_server plain;
    asio::io_context ioc;
    auto cfg = cluster_config({"redis-cluster://127.0.0.1:" + std::to_string(plain.port())});
    cfg.node_timeout = 200ms;
    redlock::client client(ioc.get_executor(), cfg);
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        redlock::diagnostics diag;
        auto [ec, none] = co_await client.async_acquire("x", options(2s), diag, tuple_awaitable);
        BOOST_TEST((ec == redlock::error::quorum_unreachable), ec.message());
        BOOST_TEST(diag.message.find("cluster support disabled") != std::string::npos, diag.message);
    }());
}

// A seed that answers CLUSTER SLOTS with no slot (a node that never joined the cluster) does
// not make the map: the next seed's is read, and locks work.
BOOST_AUTO_TEST_CASE(a_seed_that_never_joined_the_cluster_is_passed_over) {
    redis_cluster_options o;
    o.replicas_per_master = 0;
    redis_cluster cluster(o);
    redlock::test::redis_server_options lonely_options;
    lonely_options.cluster = true;
    redlock::test::redis_server lonely(lonely_options);
    BOOST_TEST_REQUIRE(lonely.command({"CLUSTER", "SLOTS"}).elements.empty());
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(),
                           cluster_config({"redis-cluster://127.0.0.1:" + std::to_string(lonely.port()) +
                                           ",127.0.0.1:" + std::to_string(cluster.server(0).port())}));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        for (const auto& resource : names("seeded-a", "seeded-b", "seeded-c"))
            co_await lock_once(client, resource);
        BOOST_TEST(node_stats(client).cluster_masters == 3u);
    }());
}

// A client with one seed: its first request to a master that is not the seed goes as soon as the
// connection the first map opened is up, without reading the map a second time (which, at most
// one read per 100 ms, took longer than a short node timeout).
BOOST_AUTO_TEST_CASE(a_first_request_to_a_master_that_is_not_a_seed_waits_for_its_connection_only) {
    redis_cluster_options o;
    o.replicas_per_master = 0;
    redis_cluster cluster(o);
    auto& seed = cluster.server(0);
    const auto resource =
        first_with("elsewhere", [&](std::uint16_t slot) { return &cluster.master_of_slot(slot) != &seed; });
    asio::io_context ioc;
    for (int i = 0; i < 5; ++i) {
        redlock::client client(ioc.get_executor(),
                               cluster_config({"redis-cluster://127.0.0.1:" + std::to_string(seed.port())}));
        run_coro(ioc, [&]() -> asio::awaitable<void> {
            co_await lock_once(client, resource);
            BOOST_TEST(node_stats(client).cluster_refreshes == 1u);
        }());
    }
}

// A master that a failover made a replica is no longer dialled: the client keeps connections to
// the masters of its map and to its seeds only.
BOOST_AUTO_TEST_CASE(a_node_gone_from_the_map_is_no_longer_connected) {
    redis_cluster cluster;  // 3 masters, a replica each
    auto& seed = cluster.server(0);
    auto* demoted = another_master(cluster, seed);
    BOOST_TEST_REQUIRE(demoted != nullptr);
    const auto resource =
        first_with("demoted", [&](std::uint16_t slot) { return &cluster.master_of_slot(slot) == demoted; });
    asio::io_context ioc;
    // The promoted replica's failover quarantine is not what this test is about.
    auto cfg = cluster_config({"redis-cluster://127.0.0.1:" + std::to_string(seed.port())});
    cfg.failover_quarantine = false;
    redlock::client client(ioc.get_executor(), cfg);
    run_coro(
        ioc,
        [&]() -> asio::awaitable<void> {
            auto lease = co_await client.async_acquire(resource, options(2s), asio::use_awaitable);
            co_await lease.async_release(asio::use_awaitable);
            BOOST_TEST(node_stats(client).cluster_connections == 3u);
            auto& promoted = cluster.failover(*demoted);
            // Two maps read after the failover (the map is read every 5 s): the second began
            // after it, and names the promoted master.
            const auto reads_before = node_stats(client).cluster_refreshes;
            BOOST_TEST(co_await eventually(
                [&] { return node_stats(client).cluster_refreshes > reads_before + 1; }, 20s));
            BOOST_TEST(node_stats(client).cluster_masters == 3u);
            BOOST_TEST(node_stats(client).cluster_connections == 3u);
            BOOST_TEST(demoted->running());
            auto [ec, again] = co_await client.async_acquire(resource, options(2s), tuple_awaitable);
            BOOST_TEST(!ec, ec.message());
            if (!ec) {
                BOOST_TEST(holder_on(promoted, resource) == again.token());
                co_await again.async_release(tuple_awaitable);
            }
            BOOST_TEST(node_stats(client).cluster_connections == 3u);
        }(),
        60s);
}

// A cluster whose nodes announce a name the client cannot resolve (as behind NAT or in
// containers: cluster-announce-hostname with hostname endpoints): with address_map mapping that
// name to the address the client reaches, the map and the redirects lead there.
BOOST_AUTO_TEST_CASE(an_address_map_leads_to_announced_addresses_the_client_cannot_reach) {
    redis_cluster_options o;
    o.replicas_per_master = 0;
    redis_cluster cluster(o);
    cluster.announce_hostname("redis.invalid");
    const auto resource = first_with(
        "mapped", [&](std::uint16_t slot) { return &cluster.master_of_slot(slot) != &cluster.server(0); });
    asio::io_context ioc;
    auto cfg = cluster_config({"redis-cluster://127.0.0.1:" + std::to_string(cluster.server(0).port())});
    cfg.address_map = {{"redis.invalid", "127.0.0.1"}};
    redlock::client client(ioc.get_executor(), cfg);
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        redlock::diagnostics diag;
        auto [ec, lease] = co_await client.async_acquire(resource, options(2s), diag, tuple_awaitable);
        BOOST_TEST(!ec, diag.message);
        if (!ec) {
            BOOST_TEST(holder_on(cluster.master_of_slot(slot_of(resource)), resource) == lease.token());
            co_await lease.async_release(tuple_awaitable);
        }
        BOOST_TEST(node_stats(client).cluster_masters == 3u);
    }());
}

// The map is read by CLUSTER SHARDS; from a server that refuses it (older than 7.0, or an ACL
// that allows CLUSTER SLOTS only), by CLUSTER SLOTS. One seed, and a resource on another master:
// the lock is taken only through a map read.
BOOST_AUTO_TEST_CASE(the_map_is_read_by_cluster_shards_or_else_by_cluster_slots) {
    redis_cluster_options o;
    o.replicas_per_master = 0;
    redis_cluster cluster(o);
    for (std::size_t i = 0; i < cluster.size(); ++i) {
        for (const auto& [user, refused] :
             {std::pair{"shards-only", "-cluster|slots"}, {"slots-only", "-cluster|shards"}}) {
            const auto reply = cluster.server(i).command(
                {"ACL", "SETUSER", user, "on", ">secret", "~*", "&*", "+@all", refused});
            BOOST_TEST_REQUIRE(reply.str == "OK", redlock::resp::to_string(reply));
        }
    }
    const auto resource = first_with(
        "sharded", [&](std::uint16_t slot) { return &cluster.master_of_slot(slot) != &cluster.server(0); });
    asio::io_context ioc;
    for (const std::string user : {"shards-only", "slots-only"}) {
        redlock::client client(ioc.get_executor(),
                               cluster_config({"redis-cluster://" + user + ":secret@127.0.0.1:" +
                                               std::to_string(cluster.server(0).port())}));
        run_coro(ioc, [&]() -> asio::awaitable<void> {
            redlock::diagnostics diag;
            auto [ec, lease] = co_await client.async_acquire(resource, options(2s), diag, tuple_awaitable);
            BOOST_TEST(!ec, user << ": " << diag.message);
            if (!ec) {
                BOOST_TEST(holder_on(cluster.master_of_slot(slot_of(resource)), resource) == lease.token());
                co_await lease.async_release(tuple_awaitable);
            }
            BOOST_TEST(node_stats(client).cluster_masters == 3u, user);
        }());
    }
}

// A master SIGKILLed with a grant its replica never got, and a client started after the
// promotion, which never saw the switch: the promoted master keeps its failover quarantine
// (failover_mark.lua), so the client is refused, saying so, until the holder's lease, lost with
// the key, has run out. With the restart quarantine off, as a deployment with AOF would run.
BOOST_AUTO_TEST_CASE(a_client_started_after_a_failover_is_refused_by_the_promoted_master) {
    redis_cluster cluster;
    asio::io_context ioc;
    auto cfg = cluster_config({cluster.uri()});
    cfg.max_ttl = 15s;
    redlock::client holder(ioc.get_executor(), cfg);
    run_coro(
        ioc,
        [&]() -> asio::awaitable<void> {
            const std::string resource = "lost-in-failover";
            const auto slot = slot_of(resource);
            // Outlives the promotion (cluster-node-timeout 5 s and the election).
            auto o = options(15s);
            o.watchdog = true;
            auto lease = co_await holder.async_acquire(resource, o, asio::use_awaitable);
            auto* old_master = &cluster.master_of_slot(slot);
            BOOST_TEST(redlock::test::unreplicate(*old_master, resource) > 0);
            old_master->kill9();
            auto* promoted = co_await promoted_after_kill(cluster, slot, *old_master);
            BOOST_REQUIRE(promoted != nullptr);
            BOOST_TEST(holder_on(*promoted, resource).empty());

            redlock::client fresh(ioc.get_executor(), cfg);
            redlock::diagnostics diag;
            auto [refused, none] =
                co_await fresh.async_acquire(resource, options(15s, 0ms), diag, tuple_awaitable);
            BOOST_TEST((refused == redlock::error::quorum_unreachable), refused.message());
            BOOST_TEST(diag.message.find("127.0.0.1:" + std::to_string(promoted->port()) +
                                         ": failover quarantine: it became a master less than max_ttl ago") !=
                           std::string::npos,
                       diag.message);
            // Tried until granted: never while the holder's lease is valid.
            const auto after =
                co_await redlock::test::rival_granted_after_holder(fresh, resource, options(15s, 0ms), lease);
            BOOST_TEST(!lease.held());
            BOOST_TEST((after >= 0ms),
                       "granted " << -after.count() << " ms before the holder's lease ran out");
        }(),
        120s);
}

// A client stalled (its io_context not run, as a paused process) through two failovers that
// make the same server the master of its slots again: its slot map names that master before and
// after, and its connection read the failover mark before them. Its grants are judged on the
// master's replication ID behind each (each slot's step of several resources too): refused,
// saying why, the steps undone, until max_ttl + drift after it saw the change.
BOOST_AUTO_TEST_CASE(a_client_stalled_through_two_failovers_back_to_one_master_quarantines_it) {
    redis_cluster_options co;
    co.masters = 1;
    redis_cluster cluster(co);
    asio::io_context stalled;
    auto cfg = cluster_config({cluster.uri()});
    cfg.max_ttl = 2s;
    redlock::client client(stalled.get_executor(), cfg);
    const auto low = first_with("aba-", [](std::uint16_t s) { return s < 8000; });
    const auto high = first_with("aba-", [](std::uint16_t s) { return s > 8000; });
    run_coro(stalled, [&]() -> asio::awaitable<void> {
        auto all = co_await client.async_acquire_all(names(low, high), options(2s), asio::use_awaitable);
        co_await all.async_release(asio::use_awaitable);
    }());
    auto& first = cluster.master_of_slot(slot_of(low));
    auto& between = cluster.failover(first);
    BOOST_TEST_REQUIRE(&cluster.failover(between) == &first);

    run_coro(
        stalled,
        [&]() -> asio::awaitable<void> {
            redlock::diagnostics diag;
            auto [refused, none] =
                co_await client.async_acquire_all(names(low, high), options(2s, 0ms), diag, tuple_awaitable);
            const auto seen = std::chrono::steady_clock::now();
            BOOST_TEST((refused == redlock::error::quorum_unreachable), refused.message());
            BOOST_TEST(diag.message.find("127.0.0.1:" + std::to_string(first.port()) +
                                         ": its replication ID") != std::string::npos,
                       diag.message);
            BOOST_TEST(
                diag.message.find("it was made a replica and a master again since; failover quarantine") !=
                    std::string::npos,
                diag.message);
            BOOST_TEST(co_await eventually(
                [&] { return holder_on(first, low).empty() && holder_on(first, high).empty(); }));
            // One resource: refused for the quarantine the steps started.
            redlock::diagnostics single;
            auto [also, nothing] =
                co_await client.async_acquire(low, options(2s, 0ms), single, tuple_awaitable);
            BOOST_TEST((also == redlock::error::quorum_unreachable), also.message());
            BOOST_TEST(single.message.find("failover quarantine") != std::string::npos, single.message);
            auto [ec, granted] =
                co_await client.async_acquire_all(names(low, high), options(2s, 6s), tuple_awaitable);
            BOOST_TEST(!ec, ec.message());
            BOOST_TEST((std::chrono::steady_clock::now() - seen >= cfg.max_ttl));
            if (granted) co_await granted.async_release(asio::use_awaitable);
        }(),
        30s);
}

BOOST_AUTO_TEST_SUITE_END()
