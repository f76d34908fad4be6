// SPDX-License-Identifier: BSL-1.0
// Restart quarantine (client_config::restart_quarantine) on real servers without persistence:
// a node that restarted has lost the locks it granted, and must not vote until they expired.
// And the failover quarantine of a master "promoted" as it was (REPLICAOF NO ONE to a master).
#include "support/lock_helpers.hpp"
#include "support/printing.hpp"
#include "support/redis_server.hpp"
#include "support/run_coro.hpp"
#include "support/wait_until.hpp"
#include <redlock/redlock.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <string>
#include <thread>
#include <vector>

namespace asio = boost::asio;
using namespace std::chrono_literals;
using boost::system::error_code;
using redlock::test::lock_config;
using redlock::test::lock_key;
using redlock::test::options;
using redlock::test::run_coro;
using redlock::test::sleep_for;
using redlock::test::start_redis_servers;
using clock_type = std::chrono::steady_clock;

namespace {
constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);
// The lease A holds must outlast a kill, a restart, a new client and its warm-up on a slow
// machine (the sanitized run on one core); the servers vote once they are up this long.
constexpr auto max_ttl = 8000ms;

// Whether the client counts nodes `first` and after as voting.
bool votes_from(const redlock::client& c, std::size_t first) {
    const auto m = c.metrics();
    return std::all_of(m.nodes.begin() + static_cast<std::ptrdiff_t>(first), m.nodes.end(),
                       [](const auto& n) { return n.voting; });
}
}  // namespace

BOOST_AUTO_TEST_SUITE(quarantine_test)

// A holds the lock on nodes 0-2 of 5. Node 0 crashes and restarts at once, empty. With the
// quarantine, B cannot get a quorum while A's lease is valid (node 0 does not vote, 1 and 2
// refuse); with it off (C), node 0 grants and C holds the lock beside A: the violation the
// quarantine prevents, which shows the test can see it.
BOOST_AUTO_TEST_CASE(a_restarted_node_does_not_vote_until_the_locks_it_lost_expired) {
    auto servers = start_redis_servers(5);
    auto config = [&](bool quarantine) {
        auto c = lock_config(servers);
        c.max_ttl = max_ttl;
        c.restart_quarantine = quarantine;
        return c;
    };
    asio::io_context ioc;
    redlock::client a(ioc.get_executor(), config(true));
    run_coro(
        ioc,
        [&]() -> asio::awaitable<void> {
            // The servers were started a moment ago: for all A knows, they just lost locks.
            redlock::diagnostics early;
            auto [early_ec, none] = co_await a.async_acquire("q", options(max_ttl), early, tuple_awaitable);
            BOOST_TEST((early_ec == redlock::error::quorum_unreachable));
            BOOST_TEST(early.message.find("quarantine") != std::string::npos, early.message);
            // Three quarantined nodes decide that round: node 0 may not have answered yet.
            BOOST_TEST_REQUIRE(co_await redlock::test::eventually(
                [&] { return a.metrics().nodes[0].run_id.size() == 40u; }));
            const auto m = a.metrics();
            BOOST_TEST(!m.nodes[0].voting);
            BOOST_TEST(m.nodes[0].quarantine_left_ms > 0);
            BOOST_TEST(m.nodes[0].run_id.size() == 40u);
            BOOST_TEST(m.to_json().find("\"voting\":false") != std::string::npos);
            BOOST_TEST(co_await redlock::test::eventually(
                [&] { return redlock::test::no_key_anywhere(servers, "q"); }));

            // Once they are up for max_ttl + drift, they vote: A waits for it.
            auto first = co_await a.async_acquire("q", options(max_ttl, 10s), asio::use_awaitable);
            co_await first.async_release(asio::use_awaitable);
            // Three voting nodes are a quorum, so node 0 may still be quarantined (its uptime was
            // read a moment later than the others', or rounded down further). The lease below
            // must be on node 0: wait until all five vote.
            BOOST_TEST(co_await redlock::test::eventually([&] { return votes_from(a, 0); }, 2s));
            auto held = co_await a.async_acquire("q", options(max_ttl), asio::use_awaitable);
            BOOST_TEST(redlock::test::key_exists(*servers[0], "q"));
            servers[3]->command({"DEL", lock_key("q")});
            servers[4]->command({"DEL", lock_key("q")});
            const auto a_valid_until = held.valid_until();

            servers[0]->kill9();
            servers[0]->restart();  // no persistence: A's key there is gone

            redlock::client b(ioc.get_executor(), config(true));
            // B meets the servers now. Their uptime is in whole seconds, so B may put their start
            // up to a second later than A did, and count nodes 1-4 as voting only a moment later:
            // a second at most, well inside A's lease.
            auto [warm_ec, warm] = co_await b.async_acquire("warm-up", options(max_ttl), tuple_awaitable);
            if (!warm_ec) co_await warm.async_release(tuple_awaitable);
            BOOST_TEST(co_await redlock::test::eventually([&] { return votes_from(b, 1); }, 2s));
            redlock::diagnostics refused;
            auto [b_ec, b_lease] = co_await b.async_acquire("q", options(max_ttl), refused, tuple_awaitable);
            BOOST_TEST((b_ec == redlock::error::not_acquired), refused.message);
            BOOST_TEST((refused.nodes.at(0).error == error_code(redlock::error::node_quarantined)));
            BOOST_TEST((clock_type::now() < a_valid_until));

            redlock::client c(ioc.get_executor(), config(false));
            redlock::diagnostics c_round;
            auto [c_ec, c_lease] = co_await c.async_acquire("q", options(max_ttl), c_round, tuple_awaitable);
            BOOST_TEST(!c_ec, c_round.message);  // node 0 granted again: two holders
            BOOST_TEST((clock_type::now() < a_valid_until));
            BOOST_TEST(held.held());
            co_await c_lease.async_release(asio::use_awaitable);

            // B, waiting, gets the lock only once A's lease ran out.
            auto [w_ec, waited] = co_await b.async_acquire("q", options(max_ttl, 10s), tuple_awaitable);
            BOOST_TEST(!w_ec);
            BOOST_TEST((clock_type::now() >= a_valid_until));
            co_await waited.async_release(asio::use_awaitable);
        }(),
        60s);
}

// Nodes quarantined past the end of the wait leave no quorum that could grant within it: the
// acquire fails after one round, saying so, rather than at the end of its wait. (A wait that
// outlasts the quarantine waits for it: a_restarted_node_does_not_vote_until_the_locks_it_lost_expired.)
BOOST_AUTO_TEST_CASE(a_wait_that_ends_before_a_quorum_votes_fails_at_once) {
    auto servers = start_redis_servers(3);
    auto cfg = lock_config(servers);
    cfg.max_ttl = 60s;
    cfg.restart_quarantine = true;
    asio::io_context ioc;
    redlock::client c(ioc.get_executor(), cfg);
    run_coro(
        ioc,
        [&]() -> asio::awaitable<void> {
            redlock::diagnostics d;
            const auto started = clock_type::now();
            auto [ec, none] = co_await c.async_acquire("q", options(2s, 20s), d, tuple_awaitable);
            BOOST_TEST((ec == redlock::error::quorum_unreachable), d.message);
            BOOST_TEST((clock_type::now() - started < 20s));
            BOOST_TEST(d.message.find("no quorum of nodes votes before the wait ends") != std::string::npos,
                       d.message);
            BOOST_TEST(
                d.message.find("restart quarantine: it (re)started less than max_ttl ago; it votes in 6") !=
                    std::string::npos,
                d.message);
            // Its attempt is released, as any failed round's.
            BOOST_TEST(co_await redlock::test::eventually(
                [&] { return redlock::test::no_key_anywhere(servers, "q"); }));
        }(),
        30s);
}

// What a failed round tells a person: each cause once, after the nodes it is about. Nodes that
// refuse connections are "not connected" (not a timeout, not their address twice), and a node in
// quarantine says so once, counting down in seconds.
BOOST_AUTO_TEST_CASE(a_failed_round_says_each_cause_once) {
    auto servers = start_redis_servers(5);
    auto cfg = lock_config(servers);
    cfg.restart_quarantine = true;  // the servers are fresh: node 0 is in quarantine for 60 s
    cfg.max_ttl = 60s;
    std::vector<std::string> stopped_ports;
    for (std::size_t i = 1; i < servers.size(); ++i) {
        stopped_ports.push_back(":" + std::to_string(servers[i]->port()));
        servers[i]->stop();
    }
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), cfg);
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        // Node 0's quarantine is known once its INFO is read.
        BOOST_TEST_REQUIRE(co_await redlock::test::eventually(
            [&] { return client.metrics().nodes[0].quarantine_left_ms > 0; }));
        redlock::diagnostics diag;
        auto [ec, none] = co_await client.async_acquire("causes", options(10s), diag, tuple_awaitable);
        BOOST_TEST((ec == redlock::error::quorum_unreachable), ec.message());
        // The round ends at its third failure (quorum 3 of 5): node 0's, and two or more of the
        // stopped nodes'.
        const auto& m = diag.message;
        const auto count = [&](const std::string& what) {
            std::size_t n = 0;
            for (auto at = m.find(what); at != std::string::npos; at = m.find(what, at + 1))
                ++n;
            return n;
        };
        std::size_t named = 0;
        for (const auto& port : stopped_ports) {
            BOOST_TEST(count(port) <= 1u, m);
            named += count(port);
        }
        BOOST_TEST(named >= 2u, m);
        BOOST_TEST(count("not connected: Connection refused") == 1u, m);
        BOOST_TEST(count("the request timed out") == 0u, m);
        BOOST_TEST(count("quarantine") == 1u, m);
        BOOST_TEST(count(" s)") == 1u, m);  // "it votes in 60 s)": seconds, not ms
        BOOST_TEST(count(" ms") == 0u, m);
    }());
}

BOOST_AUTO_TEST_CASE(a_node_that_is_up_long_enough_votes_at_once) {
    auto servers = start_redis_servers(1);
    auto cfg = lock_config(servers);
    cfg.restart_quarantine = true;
    cfg.max_ttl = 100ms;
    // Uptime comes in whole seconds, and the quarantine rounds it down: 2 s is up long enough.
    std::this_thread::sleep_for(2100ms);
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), cfg);
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto l = co_await client.async_acquire("v", options(100ms), asio::use_awaitable);
        BOOST_TEST(l.held());
        BOOST_TEST(client.metrics().nodes[0].voting);
    }());
}

// The quarantine waits for the largest max_ttl any client of the nodes uses, not only its own:
// a client with the default max_ttl must not count a restarted node's grant while another
// client's longer lease, granted before the restart, may still run. Fresh servers are young:
// with its own max_ttl (1 s) B's quarantine would end within about 2 s of their start; A, which
// connected first, recorded 10 s on every node.
BOOST_AUTO_TEST_CASE(the_quarantine_waits_for_the_largest_max_ttl_any_client_recorded) {
    auto servers = start_redis_servers(3);
    auto long_leases = lock_config(servers);
    long_leases.restart_quarantine = true;
    long_leases.max_ttl = 10000ms;
    auto short_leases = long_leases;
    short_leases.max_ttl = 1000ms;
    asio::io_context ioc;
    redlock::client a(ioc.get_executor(), long_leases);
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        BOOST_TEST_REQUIRE(co_await redlock::test::eventually([&] {
            for (const auto& s : servers)
                if (redlock::test::recorded_max_ttl(*s) != "10000") return false;
            return true;
        }));
        redlock::client b(ioc.get_executor(), short_leases);
        BOOST_TEST_REQUIRE(co_await redlock::test::eventually([&] {
            for (const auto& n : b.metrics().nodes)
                if (n.run_id.empty()) return false;
            return true;
        }));
        for (const auto& n : b.metrics().nodes) {
            BOOST_TEST(!n.voting);
            // About 10 s + 1 s (uptime in whole seconds) from the servers' start, less the time
            // since; with B's own max_ttl at most about 2 s.
            BOOST_TEST(n.quarantine_left_ms > 3000, n.node << ": " << n.quarantine_left_ms << " ms");
        }
        // Its own, smaller max_ttl does not lower what is recorded.
        BOOST_TEST(redlock::test::recorded_max_ttl(*servers[0]) == "10000");
    }());
}

// Two addresses of one server (here its TCP port and its unix socket; as well `localhost` and
// `127.0.0.1`) would vote twice: 2 of 3 "nodes" would be one server. Once both have connected
// (their INFO shows one run_id), an acquire is an invalid_config naming both.
BOOST_AUTO_TEST_CASE(two_addresses_of_one_server_are_an_invalid_config) {
    auto servers = start_redis_servers(2);
    auto cfg = lock_config(servers);
    cfg.restart_quarantine = true;
    cfg.max_ttl = 100ms;
    cfg.nodes.push_back("unix://" + servers[0]->unix_socket());
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), cfg);
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        error_code ec;
        redlock::diagnostics diag;
        const auto deadline = clock_type::now() + 10s;
        while (ec != redlock::error::invalid_config && clock_type::now() < deadline) {
            auto [e, l] = co_await client.async_acquire("dup", options(100ms), diag, tuple_awaitable);
            ec = e;
            if (l.held()) co_await l.async_release(asio::use_awaitable);
            co_await sleep_for(20ms);
        }
        BOOST_TEST((ec == redlock::error::invalid_config), ec.message() << ": " << diag.message);
        BOOST_TEST(diag.message.find("nodes 0 (") != std::string::npos, diag.message);
        BOOST_TEST(diag.message.find("127.0.0.1:" + std::to_string(servers[0]->port())) != std::string::npos,
                   diag.message);
        BOOST_TEST(diag.message.find(servers[0]->unix_socket()) != std::string::npos, diag.message);
        BOOST_TEST(!client.metrics().nodes[0].voting);
        BOOST_TEST(!client.metrics().nodes[2].voting);
    }());
}

// One server under two addresses with the restart quarantine off (AOF appendfsync always, or
// servers started empty for a test): its identity is read all the same, so it never votes twice.
// Of three nodes, two are one server and the third is down: no acquire is granted, a plain lock
// or a semaphore's permit, and the acquire names both entries. Before, with the quarantine off,
// one server granted both votes.
BOOST_AUTO_TEST_CASE(two_addresses_of_one_server_never_vote_twice_with_the_quarantine_off) {
    auto servers = start_redis_servers(2);
    auto cfg = lock_config(servers);
    cfg.restart_quarantine = false;
    cfg.nodes = {servers[0]->uri(), "redis://localhost:" + std::to_string(servers[0]->port()),
                 servers[1]->uri()};
    servers[1]->kill9();
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), cfg);
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto permits = options(10s);
        permits.permits = 2;
        int granted = 0;
        error_code ec;
        redlock::diagnostics diag;
        const auto deadline = clock_type::now() + 10s;
        while (ec != redlock::error::invalid_config && clock_type::now() < deadline) {
            for (const auto& o : {options(10s), permits}) {
                auto [e, l] =
                    co_await client.async_acquire(o.permits ? "dup-permit" : "dup", o, diag, tuple_awaitable);
                ec = e;
                if (l.held()) {
                    ++granted;
                    co_await l.async_release(asio::use_awaitable);
                }
            }
            co_await sleep_for(20ms);
        }
        BOOST_TEST(granted == 0);
        BOOST_TEST((ec == redlock::error::invalid_config), ec.message() << ": " << diag.message);
        BOOST_TEST(diag.message.find("nodes 0 (") != std::string::npos, diag.message);
        BOOST_TEST(diag.message.find("localhost:" + std::to_string(servers[0]->port())) != std::string::npos,
                   diag.message);
    }());
}

// REPLICAOF NO ONE sent to a server that is a master already (a failover that picks a master
// the sentinels have not made a replica yet) leaves its replication ID as it was: only the
// calls it answered tell that it may have become the master just now, and lack what the master
// before it granted. Every client that meets it then, also one started afterwards, is refused
// until max_ttl + drift after the first met it; once that is over, nobody is refused again
// for the same call. A restart (a new process, no call) is the restart quarantine's, not this.
BOOST_AUTO_TEST_CASE(a_master_told_replicaof_no_one_is_quarantined_once) {
    auto servers = start_redis_servers(1);
    auto& server = *servers[0];
    auto cfg = lock_config(servers);  // the restart quarantine off: only the failover one speaks
    cfg.max_ttl = 1000ms;
    asio::io_context ioc;
    run_coro(
        ioc,
        [&]() -> asio::awaitable<void> {
            {
                redlock::client before(ioc.get_executor(), cfg);
                auto [ec, l] = co_await before.async_acquire("told", options(500ms, 0ms), tuple_awaitable);
                BOOST_TEST(!ec, ec.message());
            }
            BOOST_TEST(server.command({"REPLICAOF", "NO", "ONE"}).str == "OK");
            const auto replication = server.command({"INFO", "replication"}).str;
            BOOST_TEST(replication.find("master_replid2:" + std::string(40, '0')) != std::string::npos,
                       replication);

            const auto met = clock_type::now();
            redlock::client fresh(ioc.get_executor(), cfg);
            redlock::diagnostics diag;
            auto [refused, none] =
                co_await fresh.async_acquire("told", options(500ms, 0ms), diag, tuple_awaitable);
            BOOST_TEST((refused == redlock::error::quorum_unreachable), refused.message());
            BOOST_TEST(diag.message.find("failover quarantine: it became a master less than max_ttl ago; "
                                         "it votes in") != std::string::npos,
                       diag.message);
            // Not before max_ttl after the first client met it (which was after `met`).
            auto [ec, granted] = co_await fresh.async_acquire("told", options(500ms, 5s), tuple_awaitable);
            BOOST_TEST(!ec, ec.message());
            BOOST_TEST((clock_type::now() - met >= cfg.max_ttl));
            const auto stamp = server.command({"GET", "{redlock:failover:0}:replicaof"}).str;
            BOOST_TEST(stamp.ends_with(":1"), stamp);

            // The call is recorded: a client started now votes at once.
            redlock::client later(ioc.get_executor(), cfg);
            auto [later_ec, other] =
                co_await later.async_acquire("other", options(500ms, 0ms), tuple_awaitable);
            BOOST_TEST(!later_ec, later_ec.message());

            // A restarted master was told nothing: not this quarantine's to judge.
            server.kill9();
            server.restart();
            redlock::client after_restart(ioc.get_executor(), cfg);
            auto [restart_ec, fresh_lease] =
                co_await after_restart.async_acquire("told", options(500ms, 0ms), tuple_awaitable);
            BOOST_TEST(!restart_ec, restart_ec.message());
        }(),
        30s);
}

// A master made a replica and a master again while a client stays connected to it: no new
// connection runs the failover mark, and the client's view never named another master. Here
// the master between (`b`) still holds a lock it granted that `a` never got. The client judges
// each grant on the replication ID read behind it (a promotion always gives a new one): it is
// refused, saying why, until max_ttl + drift after it saw the change. A client started after
// the switch back is refused by the mark. With the failover quarantine off (the negative
// control) a connected client is granted at once: the second holder.
BOOST_AUTO_TEST_CASE(a_master_made_a_replica_and_a_master_again_under_a_connected_client_is_quarantined) {
    auto servers = start_redis_servers(2);
    auto& a = *servers[0];
    auto& b = *servers[1];
    const auto link_up = [](redlock::test::redis_server& s) {
        return s.command({"INFO", "replication"}).str.find("master_link_status:up") != std::string::npos;
    };
    BOOST_TEST_REQUIRE(b.command({"REPLICAOF", "127.0.0.1", std::to_string(a.port())}).str == "OK");
    BOOST_TEST_REQUIRE(redlock::test::wait_until([&] { return link_up(b); }));
    auto cfg = lock_config(servers);
    cfg.nodes = {a.uri()};
    cfg.max_ttl = 1500ms;
    auto unguarded = cfg;
    unguarded.failover_quarantine = false;
    asio::io_context ioc;
    run_coro(
        ioc,
        [&]() -> asio::awaitable<void> {
            redlock::client connected(ioc.get_executor(), cfg);
            redlock::client control(ioc.get_executor(), unguarded);
            for (auto* c : {&connected, &control}) {
                auto [ec, warm] = co_await c->async_acquire("warm", options(500ms, 0ms), tuple_awaitable);
                BOOST_TEST_REQUIRE(!ec, ec.message());
                co_await warm.async_release(asio::use_awaitable);
            }

            // b promoted, a made its replica and then a master again; b, still a master,
            // grants `orders` after a stopped replicating from it.
            BOOST_TEST_REQUIRE(b.command({"REPLICAOF", "NO", "ONE"}).str == "OK");
            BOOST_TEST_REQUIRE(a.command({"REPLICAOF", "127.0.0.1", std::to_string(b.port())}).str == "OK");
            BOOST_TEST_REQUIRE(co_await redlock::test::eventually([&] { return link_up(a); }, 10s));
            BOOST_TEST_REQUIRE(a.command({"REPLICAOF", "NO", "ONE"}).str == "OK");
            BOOST_TEST_REQUIRE(b.command({"SET", lock_key("orders"), "b-holder", "PX", "10000"}).str == "OK");
            BOOST_TEST(a.command({"EXISTS", lock_key("orders")}).integer == 0);

            redlock::diagnostics diag;
            auto [refused, none] =
                co_await connected.async_acquire("orders", options(1000ms, 0ms), diag, tuple_awaitable);
            const auto seen = clock_type::now();
            BOOST_TEST((refused == redlock::error::quorum_unreachable), refused.message());
            BOOST_TEST(
                diag.message.find("is not the one this client read from it: it was made a replica "
                                  "and a master again since; failover quarantine") != std::string::npos,
                diag.message);
            // The refused grant undone.
            BOOST_TEST(co_await redlock::test::eventually([&] {
                return a.command({"EXISTS", lock_key("orders")}).integer == 0;
            }));

            // Started after the switch back: the mark refuses it.
            redlock::client fresh(ioc.get_executor(), cfg);
            redlock::diagnostics fresh_diag;
            auto [fresh_refused, fresh_none] =
                co_await fresh.async_acquire("orders", options(1000ms, 0ms), fresh_diag, tuple_awaitable);
            BOOST_TEST((fresh_refused == redlock::error::quorum_unreachable), fresh_refused.message());
            BOOST_TEST(fresh_diag.message.find("failover quarantine") != std::string::npos,
                       fresh_diag.message);

            // Once: after max_ttl + drift from then, it votes again, and keeps voting.
            auto [ec, granted] =
                co_await connected.async_acquire("orders", options(1000ms, 5s), tuple_awaitable);
            BOOST_TEST(!ec, ec.message());
            BOOST_TEST((clock_type::now() - seen >= cfg.max_ttl));
            if (granted) co_await granted.async_release(asio::use_awaitable);
            auto [again_ec, again] =
                co_await connected.async_acquire("orders", options(1000ms, 0ms), tuple_awaitable);
            BOOST_TEST(!again_ec, again_ec.message());
            if (again) co_await again.async_release(asio::use_awaitable);

            // The negative control: without the quarantine, the client connected through it all
            // is granted by `a` while `b` still holds `orders` for another.
            BOOST_TEST_REQUIRE(b.command({"SET", lock_key("orders"), "b-holder", "PX", "10000"}).str == "OK");
            auto [control_ec, second] =
                co_await control.async_acquire("orders", options(1000ms, 0ms), tuple_awaitable);
            BOOST_TEST(!control_ec, control_ec.message());
            BOOST_TEST(b.command({"GET", lock_key("orders")}).str == "b-holder");
        }(),
        30s);
}

BOOST_AUTO_TEST_SUITE_END()
