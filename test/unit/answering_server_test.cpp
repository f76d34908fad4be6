// SPDX-License-Identifier: BSL-1.0
// A cluster node's grant is judged on the server that answered (answering_server.hpp): the
// scripted answers are a stale slot map, which still names a voting master for the slot while
// the promoted one answered after a MOVED, and an ASK target this client never connected to.
#include "lock/nodes/answering_server.hpp"

#include "support/resp_values.hpp"

#include <boost/test/unit_test.hpp>

#include <chrono>

using namespace std::chrono_literals;
using redlock::detail::node_health_board;
using redlock::detail::why_answer_does_not_count;
using clock_type = std::chrono::steady_clock;

BOOST_AUTO_TEST_SUITE(answering_server_test)

BOOST_AUTO_TEST_CASE(a_grant_counts_by_the_server_that_made_it_not_by_the_slot_map) {
    node_health_board board(1, 1000ms, 0.01);
    const auto old_master = board.add_node(0);
    const auto promoted = board.add_node(0);
    board.on_server_info(old_master, "run_id:old\r\nuptime_in_seconds:100\r\n");
    board.on_server_info(promoted, "run_id:new\r\nuptime_in_seconds:100\r\n");
    board.on_promoted(promoted);
    const auto now = clock_type::now();
    // The map read before the failover still names the old master, which votes: the grant
    // came from the promoted one, in its failover quarantine, and does not count.
    BOOST_TEST(board.votes(old_master, now));
    BOOST_TEST(why_answer_does_not_count(board, old_master, "10.0.0.1:7000", now).empty());
    const auto why = why_answer_does_not_count(board, promoted, "10.0.0.2:7001", now);
    BOOST_TEST(why.find("the master that answered, 10.0.0.2:7001: failover quarantine") == 0u, why);
    BOOST_TEST(why_answer_does_not_count(board, promoted, "10.0.0.2:7001", now + 2s).empty());
}

BOOST_AUTO_TEST_CASE(an_ask_target_this_client_has_no_entry_for_does_not_vote) {
    node_health_board board(1, 1000ms, 0.01);
    const auto why = why_answer_does_not_count(board, std::nullopt, "10.0.0.3:7002", clock_type::now());
    BOOST_TEST(why.find("10.0.0.3:7002") != std::string::npos, why);
    BOOST_TEST(why.find("not known") != std::string::npos, why);
    // An entry whose identity was never read does not vote either.
    const auto unread = board.add_node(0);
    BOOST_TEST(!why_answer_does_not_count(board, unread, "10.0.0.3:7002", clock_type::now()).empty());
}

// The INFO replication behind a grant: the ID the mark read counts; another quarantines and
// says why; a reply without an ID is the server's fault, and says what came.
BOOST_AUTO_TEST_CASE(a_grant_is_judged_on_the_replication_id_behind_it) {
    using redlock::detail::why_replication_id_does_not_count;
    node_health_board board(1, 1000ms, 0.01);
    const std::string marked(40, 'a');
    const std::string later(40, 'c');
    board.on_failover_mark(0, [&] {
        auto v = redlock::test::integers_reply({0, 0});
        v.elements.push_back(redlock::test::bulk_reply(marked));
        return v;
    }());
    board.on_server_info(0, "run_id:r\r\nuptime_in_seconds:100000\r\n");
    bool malformed = true;
    const auto same =
        redlock::test::bulk_reply("# Replication\r\nrole:master\r\nmaster_replid:" + marked + "\r\n");
    BOOST_TEST(why_replication_id_does_not_count(board, 0, &same, "", malformed).empty());
    BOOST_TEST(!malformed);
    const auto changed = redlock::test::bulk_reply("role:master\r\nmaster_replid:" + later + "\r\n");
    const auto why = why_replication_id_does_not_count(board, 0, &changed, "10.0.0.1:7000", malformed);
    BOOST_TEST(!malformed);
    BOOST_TEST(why.find("the master that answered, 10.0.0.1:7000: its replication ID " + later) == 0u, why);
    BOOST_TEST(why.find("failover quarantine") != std::string::npos, why);
    BOOST_TEST(!board.votes(0, clock_type::now()));
    const auto junk = redlock::test::integer_reply(3);
    const auto bad = why_replication_id_does_not_count(board, 0, &junk, "", malformed);
    BOOST_TEST(malformed);
    BOOST_TEST(bad.find("names no master_replid: (integer) 3") != std::string::npos, bad);
    BOOST_TEST(!why_replication_id_does_not_count(board, 0, nullptr, "", malformed).empty());
    BOOST_TEST(malformed);
}

BOOST_AUTO_TEST_SUITE_END()
