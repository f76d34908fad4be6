// SPDX-License-Identifier: BSL-1.0
// Restart quarantine (node_health) and the INFO server parser, without servers.
#include "lock/nodes/node_health.hpp"

#include "support/resp_values.hpp"

#include <boost/test/unit_test.hpp>

#include <chrono>

using namespace std::chrono_literals;
using redlock::detail::node_health;
using redlock::detail::node_health_board;
using redlock::detail::parse_server_info;
using redlock::detail::server_info;
using redlock::test::error_reply;
using redlock::test::integer_reply;
using redlock::test::integers_reply;
using clock_type = std::chrono::steady_clock;

namespace {
const auto t0 = clock_type::time_point(1000h);
constexpr auto max_ttl = 10000ms;
constexpr double drift = 0.01;
// max_ttl + drift (10 s * 0.01 + 2 ms) + the second the uptime is rounded to.
constexpr auto wait_after_start = 10000ms + 102ms + 1s;

server_info info(std::string run_id, std::chrono::seconds uptime) {
    return server_info{std::move(run_id), uptime};
}

const std::string first_id(40, 'a');
const std::string second_id(40, 'b');

// failover_mark.lua's reply: {left ms, the length it was started with, master_replid}.
redlock::resp::value mark_reply(std::int64_t left, std::int64_t length, const std::string& id = first_id) {
    auto v = integers_reply({left, length});
    v.elements.push_back(redlock::test::bulk_reply(id));
    return v;
}
}  // namespace

BOOST_AUTO_TEST_SUITE(node_health_test)

BOOST_AUTO_TEST_CASE(parses_run_id_and_uptime) {
    server_info out;
    BOOST_TEST(parse_server_info(
        "# Server\r\nredis_version:7.0.15\r\nrun_id:abc123\r\nuptime_in_seconds:42\r\n", out));
    BOOST_TEST(out.run_id == "abc123");
    BOOST_TEST(out.uptime.count() == 42);
    BOOST_TEST(parse_server_info("uptime_in_seconds:7\nrun_id:x", out));  // LF only, any order
    BOOST_TEST(out.uptime.count() == 7);
    BOOST_TEST(!parse_server_info("run_id:abc\r\n", out));                         // no uptime
    BOOST_TEST(!parse_server_info("uptime_in_seconds:5\r\n", out));                // no run_id
    BOOST_TEST(!parse_server_info("run_id:a\r\nuptime_in_seconds:-5\r\n", out));   // negative
    BOOST_TEST(!parse_server_info("run_id:a\r\nuptime_in_seconds:5s\r\n", out));   // junk
    BOOST_TEST(!parse_server_info("run_id:a\r\nuptime_in_seconds_x:5\r\n", out));  // other field
    BOOST_TEST(!parse_server_info("", out));
}

BOOST_AUTO_TEST_CASE(an_unknown_node_does_not_vote) {
    node_health h;
    BOOST_TEST(!h.votes(t0));
    h.on_server_info(info("a", 3600s), t0, max_ttl, drift);
    BOOST_TEST(h.votes(t0));
    h.on_reconnect();  // until the new connection's INFO answer
    BOOST_TEST(!h.votes(t0 + 1s));
    h.on_server_info(info("a", 3601s), t0 + 1s, max_ttl, drift);
    BOOST_TEST(h.votes(t0 + 1s));
}

BOOST_AUTO_TEST_CASE(a_young_node_waits_until_max_ttl_after_its_start) {
    node_health h;
    h.on_server_info(info("a", 4s), t0, max_ttl, drift);
    const auto started = t0 - 4s;
    BOOST_TEST(!h.votes(t0));
    BOOST_TEST(!h.votes(started + wait_after_start - 1ms));
    BOOST_TEST(h.votes(started + wait_after_start));
    BOOST_TEST((h.quarantined_until() == started + wait_after_start));
}

// The quarantine of a young node ends max_ttl + drift + 1 s after its start, and every node
// whose uptime is short of that waits, also one up for longer than max_ttl + 1 s when the drift
// is above a second (it used to vote at once).
BOOST_AUTO_TEST_CASE(a_node_up_for_less_than_max_ttl_plus_drift_waits_when_the_drift_is_long) {
    node_health h;
    constexpr auto long_ttl = 300000ms;  // drift: 3 s + 2 ms
    h.on_server_info(info("a", 302s), t0, long_ttl, drift);
    const auto started = t0 - 302s;
    BOOST_TEST(!h.votes(t0));
    BOOST_TEST(!h.votes(started + 1s + long_ttl + 3002ms - 1ms));
    BOOST_TEST(h.votes(started + 1s + long_ttl + 3002ms));

    node_health old;
    old.on_server_info(info("a", 305s), t0, long_ttl, drift);
    BOOST_TEST(old.votes(t0));  // started longer ago than the whole wait
}

BOOST_AUTO_TEST_CASE(a_changed_run_id_waits_max_ttl_from_now_whatever_its_uptime) {
    node_health h;
    h.on_server_info(info("a", 3600s), t0, max_ttl, drift);
    BOOST_TEST(h.votes(t0));
    h.on_reconnect();
    h.on_server_info(info("b", 3600s), t0 + 5s, max_ttl, drift);  // a failover to another process
    BOOST_TEST(!h.votes(t0 + 5s));
    BOOST_TEST(!h.votes(t0 + 5s + 10101ms));
    BOOST_TEST(h.votes(t0 + 5s + 10102ms));
    BOOST_TEST(h.run_id() == "b");
}

BOOST_AUTO_TEST_CASE(a_restart_seen_late_is_still_quarantined_from_its_start) {
    node_health h;
    h.on_server_info(info("a", 3600s), t0, max_ttl, drift);
    h.on_reconnect();
    h.on_server_info(info("b", 2s), t0 + 30s, max_ttl, drift);
    BOOST_TEST(!h.votes(t0 + 30s));
    BOOST_TEST(h.votes(t0 + 30s + 10102ms));  // the later of the two ends
}

// `localhost` and `127.0.0.1` of one server: its INFO comes back with one run_id on both
// connections. Neither votes (one server would count twice), until one of them turns out to
// be another server after all.
BOOST_AUTO_TEST_CASE(two_nodes_with_one_run_id_do_not_vote) {
    node_health_board board(3, 1000ms, drift);
    const auto later = clock_type::now() + 10s;
    board.on_server_info(0, "run_id:aaa\r\nuptime_in_seconds:100\r\n");
    board.on_server_info(1, "run_id:bbb\r\nuptime_in_seconds:100\r\n");
    BOOST_TEST(board.votes(0, later));
    BOOST_TEST(!board.same_server_as(0).has_value());
    BOOST_TEST(!board.any_same_server());
    board.on_server_info(2, "run_id:aaa\r\nuptime_in_seconds:100\r\n");
    BOOST_TEST(board.any_same_server());
    BOOST_TEST(!board.votes(0, later));
    BOOST_TEST(!board.votes(2, later));
    BOOST_TEST(board.votes(1, later));
    BOOST_TEST(board.same_server_as(0).value() == 2u);
    BOOST_TEST(board.same_server_as(2).value() == 0u);
    BOOST_TEST(board.describe(2, later).problem.find("the same server (run_id aaa) as node 0") == 0u,
               board.describe(2, later).problem);
    board.on_server_info(2, "run_id:ccc\r\nuptime_in_seconds:100\r\n");
    BOOST_TEST(!board.same_server_as(0).has_value());
    BOOST_TEST(!board.any_same_server());
    BOOST_TEST(board.votes(0, later));
}

// Another client records a larger max_ttl: a quarantine already running lasts as long as that
// one needs, whether it came from a young server or from a changed run_id.
BOOST_AUTO_TEST_CASE(a_larger_recorded_max_ttl_extends_running_quarantines) {
    node_health_board board(2, 1000ms, drift);
    board.on_server_info(0, "run_id:young\r\nuptime_in_seconds:0\r\n");
    board.on_server_info(1, "run_id:old\r\nuptime_in_seconds:100000\r\n");
    board.on_server_info(1, "run_id:new\r\nuptime_in_seconds:100000\r\n");  // a failover
    const auto now = clock_type::now();
    BOOST_TEST(board.votes(0, now + 2500ms));
    BOOST_TEST(board.votes(1, now + 1500ms));
    board.on_recorded_max_ttl(500ms);  // smaller than ours: nothing changes
    BOOST_TEST(board.quarantine_ttl() == 1000ms);
    board.on_recorded_max_ttl(30000ms);
    BOOST_TEST(board.quarantine_ttl() == 30000ms);
    BOOST_TEST(!board.votes(0, now + 25s));
    BOOST_TEST(!board.votes(1, now + 25s));
    BOOST_TEST(board.votes(0, now + 32s));
    BOOST_TEST(board.votes(1, now + 32s));
}

// A cluster replica promoted by a failover is an old process (long uptime, its own run_id): only
// the promotion says it may lack its master's grants.
BOOST_AUTO_TEST_CASE(a_promoted_replica_waits_max_ttl_from_its_promotion) {
    node_health h;
    h.on_server_info(info("replica", 3600s), t0, max_ttl, drift);
    BOOST_TEST(h.votes(t0));
    h.on_promoted(t0 + 5s, max_ttl, drift);
    BOOST_TEST(!h.votes(t0 + 5s));
    BOOST_TEST(h.quarantined_by_promotion());
    BOOST_TEST(!h.votes(t0 + 5s + 10101ms));
    BOOST_TEST(h.votes(t0 + 5s + 10102ms));
    // A reconnect's INFO does not shorten it.
    h.on_reconnect();
    h.on_server_info(info("replica", 3606s), t0 + 6s, max_ttl, drift);
    BOOST_TEST(!h.votes(t0 + 5s + 10101ms));
    BOOST_TEST(h.votes(t0 + 5s + 10102ms));
}

// The entries of one node (the masters of one cluster) may be one server under two names; those
// of two nodes may not.
BOOST_AUTO_TEST_CASE(a_clusters_masters_have_entries_of_their_own) {
    node_health_board board(2, 1000ms, drift);
    const auto later = clock_type::now() + 10s;
    const auto seed = board.add_node(1);
    const auto master = board.add_node(1);
    BOOST_TEST(seed == 2u);
    BOOST_TEST(master == 3u);
    board.on_server_info(seed, "run_id:m1\r\nuptime_in_seconds:100\r\n");
    board.on_server_info(master, "run_id:m1\r\nuptime_in_seconds:100\r\n");
    BOOST_TEST(board.votes(master, later));
    BOOST_TEST(!board.any_same_server());
    board.on_promoted(master);
    BOOST_TEST(!board.votes(master, clock_type::now()));
    BOOST_TEST(board.describe(master, clock_type::now()).problem.find("failover quarantine") == 0u);
    BOOST_TEST(board.votes(master, later));
    BOOST_TEST(board.votes(seed, clock_type::now()));
    board.on_server_info(0, "run_id:m1\r\nuptime_in_seconds:100\r\n");
    BOOST_TEST(!board.votes(0, later));
    BOOST_TEST(!board.votes(master, later));
    BOOST_TEST(board.same_server_as(0).value() == 1u);  // the node, not the entry
}

// A client that first meets a promoted master learns of the promotion from the master itself
// (failover_mark.lua): {left, the length it was started with, its ID}. The quarantine is the
// promotion's, whatever the server's uptime and whether or not the restart rules are on.
BOOST_AUTO_TEST_CASE(a_failover_mark_quarantines_a_client_that_never_saw_the_switch) {
    for (const bool restart_rules : {true, false}) {
        node_health_board board(1, 1000ms, drift, restart_rules);
        board.on_failover_mark(0, mark_reply(700, 1012));
        board.on_server_info(0, "run_id:promoted\r\nuptime_in_seconds:100000\r\n");
        const auto now = clock_type::now();
        BOOST_TEST(!board.votes(0, now));
        BOOST_TEST(board.describe(0, now).problem.find("failover quarantine") == 0u,
                   board.describe(0, now).problem);
        BOOST_TEST(!board.votes(0, now + 650ms));
        BOOST_TEST(board.votes(0, now + 800ms));
        // The next connection's mark says it is over: it still ends no sooner than told before.
        board.on_failover_mark(0, mark_reply(0, 0));
        board.on_server_info(0, "run_id:promoted\r\nuptime_in_seconds:100000\r\n");
        BOOST_TEST(!board.votes(0, now + 650ms));
    }
}

// Started by a client with a shorter max_ttl + drift than ours: we wait the difference too.
BOOST_AUTO_TEST_CASE(a_failover_mark_started_with_a_shorter_length_is_waited_out_with_ours) {
    node_health_board board(1, 5000ms, drift, false);  // ours: 5000 + 52 ms
    board.on_failover_mark(0, mark_reply(400, 1012));
    board.on_server_info(0, "run_id:r\r\nuptime_in_seconds:100000\r\n");
    const auto now = clock_type::now();
    BOOST_TEST(!board.votes(0, now + 400ms + 4000ms));
    BOOST_TEST(board.votes(0, now + 400ms + 4040ms + 50ms));
}

// A mark that failed (an error reply, a reply of another shape): the node does not vote, and
// says why; the next connection's good mark lets it vote.
BOOST_AUTO_TEST_CASE(a_failed_failover_mark_keeps_the_node_from_voting) {
    node_health_board board(1, 1000ms, drift, false);
    const auto later = clock_type::now() + 10s;
    board.on_failover_mark(0, error_reply("NOPERM this user has no permissions to run the 'info' command"));
    board.on_server_info(0, "run_id:r\r\nuptime_in_seconds:100000\r\n");
    BOOST_TEST(!board.votes(0, later));
    BOOST_TEST(
        board.describe(0, later).problem.find("its failover mark failed (no vote without it): NOPERM") == 0u,
        board.describe(0, later).problem);
    board.on_failover_mark(0, integer_reply(3));
    board.on_server_info(0, "run_id:r\r\nuptime_in_seconds:100000\r\n");
    BOOST_TEST(!board.votes(0, later));
    board.on_failover_mark(0, integers_reply({0, 0}));  // no replication ID
    board.on_server_info(0, "run_id:r\r\nuptime_in_seconds:100000\r\n");
    BOOST_TEST(!board.votes(0, later));
    board.on_failover_mark(0, mark_reply(0, 0));
    board.on_server_info(0, "run_id:r\r\nuptime_in_seconds:100000\r\n");
    BOOST_TEST(board.votes(0, later));
}

// A connection set up while the server was still a replica ({-1, 0, ""}): a master on it later
// became one after now, so it waits max_ttl + drift from now, as a promotion seen by the client.
BOOST_AUTO_TEST_CASE(a_failover_mark_from_a_replica_quarantines_from_now) {
    node_health_board board(1, 1000ms, drift, false);
    const auto before = clock_type::now();
    board.on_failover_mark(0, mark_reply(-1, 0, ""));
    board.on_server_info(0, "run_id:r\r\nuptime_in_seconds:100000\r\n");
    const auto after = clock_type::now();
    BOOST_TEST(!board.votes(0, after));
    BOOST_TEST(board.describe(0, after).problem.find("failover quarantine") == 0u,
               board.describe(0, after).problem);
    BOOST_TEST(!board.votes(0, before + 1011ms));
    BOOST_TEST(board.votes(0, after + 1013ms));
}

BOOST_AUTO_TEST_CASE(parses_the_replication_id) {
    using redlock::detail::parse_replication_id;
    const auto text = "# Replication\r\nrole:master\r\nconnected_slaves:0\r\nmaster_replid:" + first_id +
                      "\r\nmaster_replid2:" + std::string(40, '0') + "\r\n";
    BOOST_TEST(parse_replication_id(text) == first_id);
    BOOST_TEST(parse_replication_id("master_replid:" + first_id) == first_id);        // LF or none
    BOOST_TEST(parse_replication_id("master_replid2:" + first_id + "\r\n").empty());  // the other
    BOOST_TEST(parse_replication_id("master_replid:" + first_id.substr(1) + "\r\n").empty());
    BOOST_TEST(parse_replication_id("master_replid:" + std::string(40, 'g') + "\r\n").empty());
    BOOST_TEST(parse_replication_id("").empty());
}

// A grant judged on the replication ID behind it: the ID a failover mark read counts; another
// means the server was made a replica and a master again while this client's connection stayed
// open (no new mark saw it): quarantined from now, once; that ID then counts once it is over.
BOOST_AUTO_TEST_CASE(a_grant_under_a_replication_id_no_mark_read_quarantines_from_now) {
    for (const bool restart_rules : {true, false}) {
        node_health_board board(1, 1000ms, drift, restart_rules);
        board.on_failover_mark(0, mark_reply(0, 0));
        board.on_server_info(0, "run_id:r\r\nuptime_in_seconds:100000\r\n");
        const auto before = clock_type::now();
        BOOST_TEST(board.votes(0, before));
        BOOST_TEST(board.granted_under(0, first_id));
        BOOST_TEST(board.votes(0, before));
        BOOST_TEST(!board.granted_under(0, second_id));
        const auto after = clock_type::now();
        BOOST_TEST(!board.votes(0, after));
        BOOST_TEST(board.describe(0, after).problem.find("failover quarantine") == 0u,
                   board.describe(0, after).problem);
        BOOST_TEST(!board.votes(0, before + 1011ms));
        BOOST_TEST(board.votes(0, after + 1013ms));
        // Read once, it counts: the quarantine is not started again.
        BOOST_TEST(board.granted_under(0, second_id));
        BOOST_TEST(board.votes(0, after + 1013ms));
        // The first ID still counts: a grant sent before the change, answered after it.
        BOOST_TEST(board.granted_under(0, first_id));
    }
}

// A mark from a replica names no ID: the first grant after its promotion starts a quarantine,
// however long after the mark that promotion came.
BOOST_AUTO_TEST_CASE(a_grant_of_a_server_marked_as_a_replica_quarantines_from_then) {
    node_health_board board(1, 1000ms, drift, false);
    board.on_failover_mark(0, mark_reply(-1, 0, ""));
    board.on_server_info(0, "run_id:r\r\nuptime_in_seconds:100000\r\n");
    BOOST_TEST(board.marked_as_replica(0));  // a cluster client makes its connection anew
    const auto later = clock_type::now() + 5s;
    BOOST_TEST(board.votes(0, later));
    BOOST_TEST(!board.granted_under(0, first_id));
    BOOST_TEST(!board.votes(0, clock_type::now() + 1000ms));
    board.on_failover_mark(0, mark_reply(0, 0, second_id));
    BOOST_TEST(!board.marked_as_replica(0));
}

// The client saw it become a master and read its ID on the replica's connection: grants under
// that ID count once a quarantine from the reading is over, and the reading ends the replica state.
BOOST_AUTO_TEST_CASE(an_id_read_after_a_promotion_seen_counts_after_a_quarantine_from_the_reading) {
    node_health_board board(1, 1000ms, drift, false);
    board.on_failover_mark(0, mark_reply(-1, 0, ""));
    board.on_server_info(0, "run_id:r\r\nuptime_in_seconds:100000\r\n");
    board.on_promoted(0);
    board.on_replication_id_read(0, "");  // an unreadable reply changes nothing
    BOOST_TEST(board.marked_as_replica(0));
    board.on_replication_id_read(0, first_id);
    const auto read = clock_type::now();
    BOOST_TEST(!board.marked_as_replica(0));
    BOOST_TEST(!board.votes(0, read + 900ms));
    BOOST_TEST(board.granted_under(0, first_id));
    BOOST_TEST(board.votes(0, read + 1013ms));
}

// Each entry keeps its own IDs: one cluster master's ID does not let another's grant count.
BOOST_AUTO_TEST_CASE(replication_ids_are_kept_per_entry) {
    node_health_board board(1, 1000ms, drift, false);
    const auto other = board.add_node(0);
    board.on_failover_mark(0, mark_reply(0, 0, first_id));
    board.on_failover_mark(other, mark_reply(0, 0, second_id));
    BOOST_TEST(board.granted_under(other, second_id));
    BOOST_TEST(!board.granted_under(other, first_id));
    BOOST_TEST(board.granted_under(0, first_id));
}

// Without the restart rules a young server or a new run_id votes at once; a promotion this
// client saw still quarantines it, and one server under two names still votes once.
BOOST_AUTO_TEST_CASE(without_the_restart_rules_only_the_failover_and_identity_rules_hold) {
    node_health_board board(2, 1000ms, drift, false);
    const auto now = clock_type::now();
    board.on_server_info(0, "run_id:young\r\nuptime_in_seconds:0\r\n");
    BOOST_TEST(board.votes(0, now));
    board.on_server_info(0, "run_id:restarted\r\nuptime_in_seconds:0\r\n");
    BOOST_TEST(board.votes(0, now));
    board.on_promoted(0);
    BOOST_TEST(!board.votes(0, now));
    BOOST_TEST(board.votes(0, now + 1200ms));
    board.on_server_info(1, "run_id:restarted\r\nuptime_in_seconds:0\r\n");
    BOOST_TEST(!board.votes(1, now + 2s));
    BOOST_TEST(board.same_server_as(1).value() == 0u);
}

BOOST_AUTO_TEST_SUITE_END()
