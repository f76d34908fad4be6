// SPDX-License-Identifier: BSL-1.0
// Inspection and admin on real servers, N = 1 and N = 5: client::async_inspect on every kind
// of lock, lease::async_check, client::async_force_release, and a lease handed over to another
// process (lease::handover, client::async_adopt).
#include "support/child_process.hpp"
#include "support/lock_helpers.hpp"
#include "support/printing.hpp"
#include "support/redis_server.hpp"
#include "support/run_coro.hpp"
#include "support/scratch_dir.hpp"
#include <redlock/redlock.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <unistd.h>

namespace asio = boost::asio;
namespace data = boost::unit_test::data;
using namespace std::chrono_literals;
using redlock::hold_type;
using redlock::test::eventually;
using redlock::test::key_tag;
using redlock::test::lock_config;
using redlock::test::lock_key;
using redlock::test::members_everywhere;
using redlock::test::no_key_anywhere;
using redlock::test::options;
using redlock::test::run_coro;
using redlock::test::sleep_for;
using redlock::test::start_redis_servers;

namespace {

constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);
const auto node_counts = data::make({1, 5});

bool lists(const std::vector<std::string>& holders, const std::string& token) {
    return std::find(holders.begin(), holders.end(), token) != holders.end();
}

// Whether `command` (ZCARD, HLEN) on `resource`'s lock key answers `n` on every server.
bool counted_everywhere(const redlock::test::server_list& servers, const std::string& command,
                        const std::string& resource, std::int64_t n) {
    const auto key = lock_key(resource);
    for (const auto& s : servers)
        if (s->command({command, key}).integer != n) return false;
    return true;
}

bool key_on_every_node(const redlock::test::server_list& servers, const std::string& resource) {
    for (const auto& s : servers)
        if (!redlock::test::key_exists(*s, resource)) return false;
    return true;
}

bool every_node_is(const redlock::inspection& i, hold_type t) {
    return std::all_of(i.nodes.begin(), i.nodes.end(),
                       [&](const redlock::node_inspection& n) { return !n.error && n.type == t; });
}

}  // namespace

BOOST_AUTO_TEST_SUITE(inspect_test)

BOOST_DATA_TEST_CASE(inspect_shows_every_kind_and_what_a_quorum_agrees_on, node_counts, n) {
    auto servers = start_redis_servers(static_cast<std::size_t>(n));
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), lock_config(servers));
    const auto inspect = [&](std::string resource) -> asio::awaitable<redlock::inspection> {
        auto [ec, i] = co_await client.async_inspect(resource, tuple_awaitable);
        BOOST_TEST(!ec, ec.message());
        co_return i;
    };
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto free = co_await inspect("nothing");
        BOOST_TEST(!free.held());
        BOOST_TEST(free.nodes.size() == static_cast<std::size_t>(n));
        BOOST_TEST(free.quorum == static_cast<std::size_t>(n / 2 + 1));
        BOOST_TEST(every_node_is(free, hold_type::free));
        BOOST_TEST(free.nodes[0].pttl_ms == -2);
        BOOST_TEST(free.nodes[0].node.find(std::to_string(servers[0]->port())) != std::string::npos,
                   free.nodes[0].node);

        // A fenced plain lock: its token, its time left, the fence.
        auto fenced = options(10s);
        fenced.fenced = true;
        auto plain = co_await client.async_acquire("plain", fenced, asio::use_awaitable);
        BOOST_TEST(
            co_await eventually([&] { return redlock::test::held_everywhere(servers, "plain", plain); }));
        auto i = co_await inspect("plain");
        BOOST_TEST(i.held());
        BOOST_TEST(i.holders == std::vector<std::string>{plain.token()});
        BOOST_TEST(i.fence == plain.fence());
        BOOST_TEST(every_node_is(i, hold_type::lock));
        BOOST_TEST(i.nodes[0].pttl_ms > 0);
        BOOST_TEST(i.nodes[0].pttl_ms <= 10000);
        BOOST_TEST(to_json(i).find("\"held\":true") != std::string::npos, to_json(i));

        // Reentrant: the owner and both acquisitions.
        auto r = options();
        r.reentrant = true;
        r.owner = redlock::owner_id("worker-7");
        auto outer = co_await client.async_acquire("re", r, asio::use_awaitable);
        auto inner = co_await client.async_acquire("re", r, asio::use_awaitable);
        BOOST_TEST(co_await eventually([&] { return counted_everywhere(servers, "HLEN", "re", 3); }));
        i = co_await inspect("re");
        BOOST_TEST(i.owner == "worker-7");
        BOOST_TEST(every_node_is(i, hold_type::reentrant));
        BOOST_TEST(lists(i.holders, outer.token()));
        BOOST_TEST(lists(i.holders, inner.token()));

        // A semaphore: its count and its live permits.
        auto k = options();
        k.permits = 3;
        auto p1 = co_await client.async_acquire("sem", k, asio::use_awaitable);
        auto p2 = co_await client.async_acquire("sem", k, asio::use_awaitable);
        BOOST_TEST(co_await eventually([&] { return members_everywhere(servers, "sem", 2); }));
        i = co_await inspect("sem");
        BOOST_TEST(every_node_is(i, hold_type::semaphore));
        BOOST_TEST(i.nodes[0].permits == 3);
        BOOST_TEST(i.holders.size() == 2u);
        BOOST_TEST(lists(i.holders, p1.token()));
        BOOST_TEST(lists(i.holders, p2.token()));

        // A fair lock with a waiter queued behind its holder.
        auto f = options(10s, 20s);
        f.fair = true;
        auto head = co_await client.async_acquire("fair", f, asio::use_awaitable);
        bool waiter_done = false;
        asio::co_spawn(
            ioc,
            [&]() -> asio::awaitable<void> {
                auto l = co_await client.async_acquire("fair", f, asio::use_awaitable);
                co_await l.async_release(asio::use_awaitable);
                waiter_done = true;
            },
            asio::detached);
        BOOST_TEST(co_await eventually([&] { return redlock::test::queued_everywhere(servers, "fair", 1); }));
        i = co_await inspect("fair");
        BOOST_TEST(i.nodes[0].queued == 1);
        BOOST_TEST(i.held());
        co_await head.async_release(asio::use_awaitable);
        BOOST_TEST(co_await eventually([&] { return waiter_done; }, 20s));

        for (auto* l : {&plain, &outer, &inner, &p1, &p2})
            co_await l->async_release(asio::use_awaitable);
        auto [bad, none] = co_await client.async_inspect("", tuple_awaitable);
        BOOST_TEST(bad == redlock::error::invalid_resource);
    }());
}

// Who holds, for every kind: the host name, the process id and the label that the acquiring
// client recorded in each token, read back from what the servers hold. A client with
// identify_holder off records nothing: its tokens are the 128 random bits alone.
BOOST_AUTO_TEST_CASE(inspect_tells_who_holds_every_kind) {
    auto servers = start_redis_servers(3);
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), lock_config(servers));
    char host[256] = {};
    BOOST_TEST_REQUIRE(::gethostname(host, sizeof host - 1) == 0);
    const redlock::holder_identity me{host, static_cast<std::int64_t>(::getpid()), "nightly report"};
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        std::vector<redlock::lease> leases;
        const auto hold = [&](const std::string& resource, redlock::lock_options o) -> asio::awaitable<void> {
            o.label = "nightly report";
            leases.push_back(co_await client.async_acquire(resource, o, asio::use_awaitable));
        };
        auto fenced = options(10s);
        fenced.fenced = true;
        co_await hold("who-plain", fenced);
        auto r = options(10s);
        r.reentrant = true;
        r.owner = redlock::owner_id("worker-7");
        co_await hold("who-reentrant", r);
        auto k = options(10s);
        k.permits = 2;
        co_await hold("who-semaphore", k);
        auto f = options(10s);
        f.fair = true;
        co_await hold("who-fair", f);
        auto w = options(10s);
        w.mode = redlock::lock_mode::write;
        co_await hold("who-write", w);
        auto rd = options(10s);
        rd.mode = redlock::lock_mode::read;
        co_await hold("who-read", rd);
        for (const std::string resource :
             {"who-plain", "who-reentrant", "who-semaphore", "who-fair", "who-write", "who-read"}) {
            auto [ec, i] = co_await client.async_inspect(resource, tuple_awaitable);
            BOOST_TEST_REQUIRE(!ec, ec.message());
            BOOST_TEST_REQUIRE(i.holders.size() == 1u, resource);
            const auto who = redlock::identity_of(i.holders.front());
            BOOST_TEST((who == me), resource << ": " << i.holders.front());
            BOOST_TEST(to_json(i).find("\"label\":\"nightly report\"") != std::string::npos, to_json(i));
        }
        for (auto& l : leases)
            co_await l.async_release(asio::use_awaitable);
    }());

    auto anonymous = lock_config(servers);
    anonymous.identify_holder = false;
    redlock::client quiet(ioc.get_executor(), anonymous);
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto o = options(10s);
        o.label = "not recorded";
        auto l = co_await quiet.async_acquire("who-anonymous", o, asio::use_awaitable);
        BOOST_TEST(l.token().size() == 32u);
        auto [ec, i] = co_await quiet.async_inspect("who-anonymous", tuple_awaitable);
        BOOST_TEST_REQUIRE(i.holders.size() == 1u);
        BOOST_TEST(!redlock::identity_of(i.holders.front()).has_value());
        co_await l.async_release(asio::use_awaitable);
    }());
}

BOOST_DATA_TEST_CASE(a_lease_check_asks_whether_a_quorum_still_holds_it, node_counts, n) {
    auto servers = start_redis_servers(static_cast<std::size_t>(n));
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto r = options();
        r.reentrant = true;
        r.owner = redlock::owner_id("me");
        auto k = options();
        k.permits = 2;
        const std::vector<redlock::lock_options> kinds{options(), r, k};
        const auto checked_key = lock_key("checked");
        for (const auto& o : kinds) {
            auto l = co_await client.async_acquire("checked", o, asio::use_awaitable);
            // Every grant landed, or a DEL below could come before one.
            BOOST_TEST(co_await eventually([&] { return key_on_every_node(servers, "checked"); }));
            auto [ec] = co_await l.async_check(tuple_awaitable);
            BOOST_TEST(!ec, ec.message());

            // Gone from a majority behind the lease's back: not ours, and the lease is left as it
            // was (an extend or the watchdog acts on it).
            for (std::size_t s = 0; s < servers.size() / 2 + 1; ++s)
                servers[s]->command({"DEL", checked_key});
            redlock::diagnostics diag;
            auto [gone] = co_await l.async_check(diag, tuple_awaitable);
            BOOST_TEST(gone == redlock::error::not_owner, diag.message);
            BOOST_TEST(l.held());
            co_await l.async_release(tuple_awaitable);
            for (const auto& s : servers)
                s->command({"DEL", checked_key});
        }
        redlock::lease empty;
        auto [ec] = co_await empty.async_check(tuple_awaitable);
        BOOST_TEST(ec == redlock::error::not_owner);
    }());
}

BOOST_DATA_TEST_CASE(a_forced_release_frees_any_kind_wakes_a_waiter_and_keeps_the_fence, node_counts, n) {
    auto servers = start_redis_servers(static_cast<std::size_t>(n));
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), lock_config(servers));
    redlock::client other(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto fenced = options(60s);
        fenced.fenced = true;
        auto stuck = co_await client.async_acquire("stuck", fenced, asio::use_awaitable);
        BOOST_TEST(
            co_await eventually([&] { return redlock::test::held_everywhere(servers, "stuck", stuck); }));
        std::optional<redlock::lease> next;
        const auto refused_before = other.metrics().contended;
        asio::co_spawn(
            ioc,
            [&]() -> asio::awaitable<void> {
                auto o = options(10s, 30s);
                o.fenced = true;
                auto [ec, l] = co_await other.async_acquire("stuck", o, tuple_awaitable);
                BOOST_TEST(!ec, ec.message());
                next.emplace(std::move(l));
            },
            asio::detached);
        // It waits: it tried, and was refused.
        BOOST_TEST_REQUIRE(co_await eventually([&] { return other.metrics().contended > refused_before; }));
        BOOST_TEST(!next.has_value());
        auto [ec, freed] = co_await client.async_force_release("stuck", tuple_awaitable);
        BOOST_TEST(!ec, ec.message());
        BOOST_TEST(freed == static_cast<std::size_t>(n));
        BOOST_TEST(co_await eventually([&] { return next.has_value(); }, 20s));
        BOOST_TEST_REQUIRE(next.has_value());
        BOOST_TEST(next->fence() > stuck.fence());  // the counter stayed
        auto [lost] = co_await stuck.async_extend(10s, tuple_awaitable);
        BOOST_TEST(lost == redlock::error::not_owner);
        co_await next->async_release(asio::use_awaitable);

        // A semaphore's permits and count, all at once; nothing held: nothing freed.
        auto k = options();
        k.permits = 2;
        auto p = co_await client.async_acquire("sem", k, asio::use_awaitable);
        BOOST_TEST(co_await eventually([&] { return members_everywhere(servers, "sem", 1); }));
        auto [ec2, freed2] = co_await client.async_force_release("sem", tuple_awaitable);
        BOOST_TEST(freed2 == static_cast<std::size_t>(n));
        BOOST_TEST(no_key_anywhere(servers, "sem"));  // the count is in the key
        auto [ec3, freed3] = co_await client.async_force_release("sem", tuple_awaitable);
        BOOST_TEST(!ec3);
        BOOST_TEST(freed3 == 0u);
        auto [bad, none] = co_await client.async_force_release("", tuple_awaitable);
        BOOST_TEST(bad == redlock::error::invalid_resource);
    }());
}

// A fenced lease written out and handed to another process, which adopts it, extends it and
// releases it there; the first process's copy is then no longer the holder's.
BOOST_DATA_TEST_CASE(a_lease_adopted_by_another_process_is_extended_and_released_there, node_counts, n) {
    auto servers = start_redis_servers(static_cast<std::size_t>(n));
    redlock::test::scratch_dir dir;
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto o = options(10s);
        o.fenced = true;
        auto first = co_await client.async_acquire("handed", o, asio::use_awaitable);
        co_await first.async_release(asio::use_awaitable);
        auto l = co_await client.async_acquire("handed", o, asio::use_awaitable);
        BOOST_TEST(l.fence() > first.fence());  // the fence that travels is not the first one
        BOOST_TEST(co_await eventually([&] { return redlock::test::held_everywhere(servers, "handed", l); }));
        const auto text = l.handover();
        BOOST_TEST(text.find("\"token\":\"" + l.token() + "\"") != std::string::npos, text);
        std::ofstream(dir.file("lease")) << text;

        const auto out = dir.file("out");
        const auto child = redlock::test::spawn_shell(std::string(REDLOCK_LEASE_ADOPTER_PATH) + " --nodes " +
                                                          redlock::test::node_uris(servers) + " --lease " +
                                                          dir.file("lease"),
                                                      out);
        int status = -2;
        for (int i = 0; i < 600 && status == -2; ++i) {
            int raw = 0;
            if (waitpid(child, &raw, WNOHANG) == child) status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128;
            if (status == -2) co_await sleep_for(50ms);
        }
        const auto said = redlock::test::read_file(out);
        BOOST_TEST(status == 0, said);
        BOOST_TEST(said.find("adopted handed fence " + std::to_string(l.fence())) != std::string::npos, said);
        BOOST_TEST(said.find("extended\nreleased") != std::string::npos, said);
        BOOST_TEST(no_key_anywhere(servers, "handed"));
        // The first lease wrote the hand-over: it finds the adopter's work done, and ends.
        auto [ec] = co_await l.async_extend(10s, tuple_awaitable);
        BOOST_TEST((ec == redlock::error::handed_over), ec.message());
    }());
}

BOOST_DATA_TEST_CASE(adopt_takes_every_kind_and_refuses_what_no_quorum_holds, node_counts, n) {
    auto servers = start_redis_servers(static_cast<std::size_t>(n));
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), lock_config(servers));
    redlock::client other(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto r = options();
        r.reentrant = true;
        r.owner = redlock::owner_id("me");
        auto k = options();
        k.permits = 2;
        auto f = options();
        f.fair = true;
        auto reader = r;
        reader.mode = redlock::lock_mode::read;
        auto writer = options();
        writer.mode = redlock::lock_mode::write;
        const std::vector<redlock::lock_options> kinds{options(), r, k, f, reader, writer};
        for (const auto& o : kinds) {
            auto l = co_await client.async_acquire("kinds", o, asio::use_awaitable);
            // The acquire completed at a quorum: the rest of its grants land first, or the
            // adopter's release could come before them.
            BOOST_TEST(co_await eventually([&] { return key_on_every_node(servers, "kinds"); }));
            auto keep = options(3s);
            keep.watchdog = true;
            redlock::diagnostics diag;
            auto [ec, adopted] = co_await other.async_adopt(l.handover(), keep, diag, tuple_awaitable);
            BOOST_TEST_REQUIRE(!ec, ec.message() << ": " << diag.message);
            BOOST_TEST(adopted.token() != l.token());  // the adopter's own
            BOOST_TEST((adopted.remaining() > 0s));    // ttl - the hand-over's round trip - drift
            BOOST_TEST((adopted.remaining() <= 3s));
            co_await adopted.async_check(asio::use_awaitable);
            co_await adopted.async_release(asio::use_awaitable);
            BOOST_TEST(co_await eventually([&] { return no_key_anywhere(servers, "kinds"); }));

            // Released: nothing to adopt any more.
            auto [gone, none] = co_await other.async_adopt(l.handover(), keep, tuple_awaitable);
            BOOST_TEST(gone == redlock::error::not_owner);
        }
        redlock::diagnostics diag;
        auto [bad, none] = co_await other.async_adopt("{\"token\": 1}", options(), diag, tuple_awaitable);
        BOOST_TEST(bad == redlock::error::invalid_config);
        BOOST_TEST(diag.message.find("lease::handover") != std::string::npos, diag.message);
        // A fair lease is its place in the queue: without one there is nothing to adopt.
        auto [placeless, no_lease] = co_await other.async_adopt(
            R"({"redlock_lease": 1, "resource": "kinds", "kind": "fair", "token": "t", "fence": 0, )"
            R"("fenced": false, "owner": "", "place": "", "permits": 0})",
            options(), diag, tuple_awaitable);
        BOOST_TEST(placeless == redlock::error::invalid_config);
        BOOST_TEST(diag.message.find("names its place") != std::string::npos, diag.message);
        BOOST_TEST(redlock::lease().handover().empty());
    }());
}

BOOST_AUTO_TEST_SUITE_END()
