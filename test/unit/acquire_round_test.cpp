// SPDX-License-Identifier: BSL-1.0
// The rounds of an acquisition without I/O (acquire_round, fence_settlement): votes in every
// order, the decision and its cause, validity, the fence over a quorum with a node behind,
// fenced re-entries, cleanups, tokens, and a fair waiter's ticket and hand-offs. Scripted node
// answers and explicit times: no server, no clock.
#include "lock/acquire/acquire_round.hpp"

#include "lock/nodes/replica_waits.hpp"
#include "support/resp_values.hpp"
#include <redlock/error.hpp>

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using redlock::error;
using redlock::detail::acquire_round;
using redlock::detail::quorum_of;
using redlock::detail::vote;
using action = acquire_round::step::action;
using clock_type = std::chrono::steady_clock;

namespace {

const clock_type::time_point t0{std::chrono::seconds(1000)};

// Every sequence of `n` votes (3^n of them): every order of every mix.
std::vector<std::vector<vote>> all_sequences(std::size_t n) {
    std::vector<std::vector<vote>> out{{}};
    for (std::size_t i = 0; i < n; ++i) {
        std::vector<std::vector<vote>> next;
        for (const auto& s : out) {
            for (auto v : {vote::granted, vote::denied, vote::failed}) {
                next.push_back(s);
                next.back().push_back(v);
            }
        }
        out = std::move(next);
    }
    return out;
}

std::vector<std::size_t> nodes_of(const std::vector<bool>& mask) {
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < mask.size(); ++i)
        if (mask[i]) out.push_back(i);
    return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(acquire_round_test)

BOOST_AUTO_TEST_CASE(grants_denials_and_timeouts_in_every_order_decide_as_soon_as_the_outcome_is_certain) {
    for (std::size_t n : {1u, 3u, 5u}) {
        const auto q = quorum_of(n);
        for (const auto& votes : all_sequences(n)) {
            acquire_round round(n, false);
            round.begin("tok", t0);
            std::size_t granted = 0, failed = 0, decisions = 0;
            for (std::size_t i = 0; i < n; ++i) {
                const bool was_counting = round.counting();
                const auto s = round.count(i, votes[i], 0);
                granted += votes[i] == vote::granted ? 1 : 0;
                failed += votes[i] == vote::failed ? 1 : 0;
                const std::size_t left = n - i - 1;
                // Certain: a quorum granted, or too few nodes are left to make one.
                const bool certain = granted >= q || granted + left < q;
                if (!was_counting) {
                    BOOST_TEST((s.what == action::none), "n=" << n << " vote " << i << ": decided twice");
                    BOOST_TEST(!s.decided);
                    continue;
                }
                BOOST_TEST(s.decided == certain, "n=" << n << " vote " << i);
                if (!s.decided) {
                    BOOST_TEST((s.what == action::none));
                    continue;
                }
                ++decisions;
                if (granted >= q) {
                    BOOST_TEST((s.what == action::grant));
                } else {
                    BOOST_TEST((s.what == action::fail));
                    // More failures than the nodes a quorum can spare: no quorum whatever the
                    // others say. Else the nodes are held by another owner.
                    BOOST_TEST(
                        (s.cause == (failed > n - q ? error::quorum_unreachable : error::not_acquired)),
                        "n=" << n << " vote " << i);
                }
                BOOST_TEST(!round.counting());
            }
            BOOST_TEST(decisions == 1u);
        }
    }
}

BOOST_AUTO_TEST_CASE(the_final_round_lost_to_denials_hears_every_node_before_it_gives_up) {
    acquire_round round(5, false);
    round.begin("tok", t0);
    BOOST_TEST((round.count(0, vote::denied, 0).what == action::none));
    BOOST_TEST((round.count(1, vote::denied, 0).what == action::none));
    const auto lost = round.count(2, vote::denied, 0);
    BOOST_TEST((lost.what == action::fail));
    BOOST_TEST((lost.cause == error::not_acquired));
    round.await_stragglers(lost.cause);
    BOOST_TEST(round.counting());
    BOOST_TEST((round.count(3, vote::failed, 0).what == action::none));
    const auto heard = round.count(4, vote::failed, 0);
    BOOST_TEST((heard.what == action::give_up));
    BOOST_TEST((heard.cause == error::not_acquired));  // the acquire names the cause from the tally
    BOOST_TEST(round.tally().failed() == 2u);
}

BOOST_AUTO_TEST_CASE(a_quorum_that_arrives_after_the_validity_ran_out_is_no_grant) {
    acquire_round round(3, false);
    round.begin("tok", t0);
    // ttl 100 ms, drift 1 %: 3 ms of allowance.
    BOOST_TEST((round.validity(t0 + 50ms, 100ms, 0.01, 0ms) == std::optional<clock_type::duration>(47ms)));
    BOOST_TEST(!round.validity(t0 + 97ms, 100ms, 0.01, 0ms));
    BOOST_TEST(!round.validity(t0 + 150ms, 100ms, 0.01, 0ms));
    // Not above lock_options::min_validity: no grant either.
    BOOST_TEST(round.validity(t0 + 50ms, 100ms, 0.01, 46ms).has_value());
    BOOST_TEST(!round.validity(t0 + 50ms, 100ms, 0.01, 47ms).has_value());
    // Each round times from its own start.
    round.begin("tok-2", t0 + 200ms);
    BOOST_TEST(round.validity(t0 + 250ms, 100ms, 0.01, 0ms).has_value());
}

BOOST_AUTO_TEST_CASE(cleanups_go_to_exactly_the_nodes_that_may_hold_our_token_in_every_phase) {
    acquire_round round(5, false);
    BOOST_TEST(!round.may_hold());  // no round sent yet
    round.begin("tok", t0);
    BOOST_TEST(round.may_hold());
    BOOST_TEST((nodes_of(round.nodes_to_release()) == std::vector<std::size_t>{0, 1, 2, 3, 4}));
    (void)round.count(1, vote::denied, 0);
    (void)round.count(3, vote::failed, 0);  // a timeout: the command may have run there
    BOOST_TEST((nodes_of(round.nodes_to_release()) == std::vector<std::size_t>{0, 2, 3, 4}));
    (void)round.count(0, vote::granted, 0);
    BOOST_TEST((nodes_of(round.nodes_to_release()) == std::vector<std::size_t>{0, 2, 3, 4}));
    const auto lost = round.count(4, vote::denied, 0);  // two of five left, three needed
    BOOST_TEST((lost.what == action::fail));
    (void)round.count(2, vote::denied, 0);
    BOOST_TEST((nodes_of(round.nodes_to_release()) == std::vector<std::size_t>{0, 3}));
    BOOST_TEST(!round.may_hold());  // decided, lost: a cancel has nothing more to free
    // The next round starts with every node again.
    round.begin("tok-2", t0);
    BOOST_TEST((nodes_of(round.nodes_to_release()).size() == 5u));
    // A won round holds nothing a cancel could free: the lease owns it now.
    for (std::size_t i = 0; i < 3; ++i)
        (void)round.count(i, vote::granted, 0);
    BOOST_TEST(!round.may_hold());
}

BOOST_AUTO_TEST_CASE(the_fence_is_the_quorums_largest_and_a_lagging_node_is_written_back) {
    acquire_round round(3, true);
    round.begin("tok", t0);
    round.granted(0, 5, true);
    BOOST_TEST((round.count(0, vote::granted, 0).what == action::none));
    round.granted(1, 7, true);
    auto s = round.count(1, vote::granted, 0);
    BOOST_TEST(s.decided);
    BOOST_TEST(round.fence() == 7u);
    // Node 0 numbered 5: behind. One node has 7, a quorum needs two: wait for the write-back.
    BOOST_TEST((s.write_back == std::vector<std::size_t>{0}));
    BOOST_TEST((s.what == action::none));
    BOOST_TEST(round.may_hold());  // a cancel now releases: the quorum holds our token
    // Node 2 grants late, numbering 6: behind too, written back without being waited for.
    BOOST_TEST(round.late_grant_behind(6));
    BOOST_TEST(!round.late_grant_behind(7));
    BOOST_TEST((round.on_writeback(true).what == action::grant));
    round.succeeded();
    BOOST_TEST(round.late_grant_behind(6));  // after the grant too

    // The write-back finds our token gone: no quorum has the fence.
    acquire_round refused(3, true);
    refused.begin("tok", t0);
    refused.granted(0, 5, true);
    (void)refused.count(0, vote::granted, 0);
    refused.granted(1, 7, true);
    (void)refused.count(1, vote::granted, 0);
    const auto short_of_quorum = refused.on_writeback(false);
    BOOST_TEST((short_of_quorum.what == action::fail));
    BOOST_TEST((short_of_quorum.cause == error::quorum_unreachable));

    // A quorum that returned the same fence grants at once; N = 1 never waits.
    acquire_round single(1, true);
    single.begin("tok", t0);
    single.granted(0, 3, true);
    s = single.count(0, vote::granted, 0);
    BOOST_TEST((s.what == action::grant));
    BOOST_TEST(s.write_back.empty());
    BOOST_TEST(single.fence() == 3u);

    // A grant that did not count (quarantine, too few replicas) takes no part in the fence.
    acquire_round quarantined(3, true);
    quarantined.begin("tok", t0);
    quarantined.granted(0, 99, true);
    (void)quarantined.count(0, vote::failed, 0);
    quarantined.granted(1, 4, true);
    (void)quarantined.count(1, vote::granted, 0);
    quarantined.granted(2, 4, true);
    BOOST_TEST((quarantined.count(2, vote::granted, 0).what == action::grant));
    BOOST_TEST(quarantined.fence() == 4u);
}

// Several resources at once: each resource's fence is the largest of the quorum's for it, and a
// node is behind when any of its counters is.
BOOST_AUTO_TEST_CASE(several_resources_settle_a_fence_each) {
    acquire_round round(3, true, 2);
    round.begin("tok", t0);
    const std::vector<std::int64_t> node0{5, 2};
    const std::vector<std::int64_t> node1{4, 3};
    round.granted(0, node0, true);
    (void)round.count(0, vote::granted, 0);
    round.granted(1, node1, true);
    auto s = round.count(1, vote::granted, 0);
    BOOST_TEST(s.decided);
    BOOST_TEST((std::vector<std::uint64_t>(round.fences().begin(), round.fences().end()) ==
                std::vector<std::uint64_t>{5, 3}));
    BOOST_TEST(round.fence() == 5u);
    // Neither node has both: both are written back, and the grant waits for a quorum of them.
    BOOST_TEST((s.write_back == std::vector<std::size_t>{0, 1}));
    BOOST_TEST((s.what == action::none));
    BOOST_TEST((round.on_writeback(true).what == action::none));
    BOOST_TEST((round.on_writeback(true).what == action::grant));
    round.succeeded();
    const std::vector<std::int64_t> settled{5, 3};
    const std::vector<std::int64_t> one_behind{5, 1};
    BOOST_TEST(!round.late_grant_behind(settled));
    BOOST_TEST(round.late_grant_behind(one_behind));
}

BOOST_AUTO_TEST_CASE(a_fenced_reentry_keeps_the_fence_of_the_hold_it_enters) {
    // Node 0 reports our existing hold (fence 4), node 1 numbered a new hold (9): one of two is
    // no quorum of the hold, and node 2 decides whether this is a re-entry.
    acquire_round round(3, true);
    round.begin("tok", t0);
    round.granted(0, 4, false);
    (void)round.count(0, vote::granted, 0);
    round.granted(1, 9, true);
    auto s = round.count(1, vote::granted, 0);
    BOOST_TEST(s.decided);
    BOOST_TEST((s.what == action::none));
    BOOST_TEST(s.write_back.empty());
    BOOST_TEST(round.counting());  // waits for node 2
    BOOST_TEST(round.may_hold());
    round.granted(2, 4, false);
    s = round.count(2, vote::granted, 0);
    BOOST_TEST(round.fence() == 4u);
    BOOST_TEST((s.write_back == std::vector<std::size_t>{1}));
    BOOST_TEST((s.what == action::grant));  // nodes 0 and 2 have it: a quorum

    // Node 2 numbers a new hold too: fewer than a quorum hold the old one, so the largest wins.
    acquire_round fresh(3, true);
    fresh.begin("tok", t0);
    fresh.granted(0, 4, false);
    (void)fresh.count(0, vote::granted, 0);
    fresh.granted(1, 9, true);
    (void)fresh.count(1, vote::granted, 0);
    fresh.granted(2, 8, true);
    s = fresh.count(2, vote::granted, 0);
    BOOST_TEST(fresh.fence() == 9u);
    BOOST_TEST((s.write_back == std::vector<std::size_t>{0, 2}));
    BOOST_TEST((s.what == action::none));

    // While this client holds the outer hold, its fence is the re-entry's, whatever answered.
    acquire_round held(3, true);
    held.begin("tok", t0);
    held.granted(0, 9, true);
    (void)held.count(0, vote::granted, 4);
    held.granted(1, 4, false);
    s = held.count(1, vote::granted, 4);
    BOOST_TEST(held.fence() == 4u);
    BOOST_TEST((s.write_back == std::vector<std::size_t>{0}));
}

BOOST_AUTO_TEST_CASE(a_late_grant_after_a_lost_round_counts_for_nothing_and_the_next_round_knows_its_token) {
    acquire_round round(3, false);
    round.begin("tok-1", t0);
    (void)round.count(0, vote::denied, 0);
    BOOST_TEST((round.count(1, vote::denied, 0).what == action::fail));
    BOOST_TEST(!round.counting());  // node 2's grant is late: the acquire reads it as a split
    BOOST_TEST(!round.late_grant_behind(3));
    BOOST_TEST((round.count(2, vote::granted, 0).what == action::none));
    // The next round writes its own token and may take over the earlier ones.
    BOOST_TEST(round.previous_token().empty());
    round.begin("tok-2", t0);
    BOOST_TEST(round.number() == 2u);
    BOOST_TEST(round.token() == "tok-2");
    BOOST_TEST(round.previous_token() == "tok-1");
    BOOST_TEST(round.is_earlier_token("tok-1"));
    BOOST_TEST(!round.is_earlier_token("tok-2"));
    // The latest eight rounds' tokens are remembered.
    for (int i = 3; i <= 12; ++i)
        round.begin("tok-" + std::to_string(i), t0);
    BOOST_TEST(!round.is_earlier_token("tok-3"));
    BOOST_TEST(round.is_earlier_token("tok-4"));
    BOOST_TEST(round.is_earlier_token("tok-11"));
}

BOOST_AUTO_TEST_CASE(a_fair_waiters_ticket_is_the_largest_of_a_quorum_and_hand_offs_count_per_node) {
    acquire_round round(5, false);
    round.begin("tok", t0);
    BOOST_TEST(!round.note_ticket(4, true));
    BOOST_TEST(!round.note_ticket(7, true));
    BOOST_TEST(round.note_ticket(5, true));  // three of five: the ticket is ours for good
    BOOST_TEST(round.ticket() == 7u);
    BOOST_TEST(!round.note_ticket(9, true));  // a straggler's does not move it
    BOOST_TEST(round.ticket() == 7u);
    acquire_round once(5, false);
    once.begin("tok", t0);
    for (int i = 0; i < 5; ++i)
        BOOST_TEST(!once.note_ticket(3, false));  // a waiter that does not queue takes none
    BOOST_TEST(once.ticket() == 0u);

    // Hand-offs heard by 2 of 5 nodes, one of them twice: two, not a quorum.
    round.begin("tok-2", t0);
    round.answered(0, false);
    round.answered(1, false);
    round.answered(3, false);
    BOOST_TEST(round.hand_over(0) == 1u);
    BOOST_TEST(round.hand_over(0) == 0u);
    BOOST_TEST(round.hand_over(4) == 2u);
    BOOST_TEST(round.hand_over(7) == 0u);  // no such node
    BOOST_TEST(round.hand_over(3) == 3u);
    round.take_handoff("place");
    BOOST_TEST(round.token() == "place:tok-2");
    // Nodes that did not hand over still queue us: the acquire takes us out there.
    BOOST_TEST((nodes_of(round.refused()) == std::vector<std::size_t>{1, 2}));
}

BOOST_AUTO_TEST_CASE(a_grant_whose_replicas_fell_short_on_one_node_is_that_nodes_failure) {
    using redlock::detail::judge_replication;
    const auto acks = redlock::test::integer_reply;
    BOOST_TEST(!judge_replication(acks(2), 2, 100ms, "").ec);
    const auto short_one = judge_replication(acks(1), 2, 100ms, "");
    BOOST_TEST((short_one.ec == error::not_replicated));
    BOOST_TEST((judge_replication(redlock::resp::value{}, 2, 100ms, "").ec == error::unexpected_reply));
    // In a round of three, the short node fails and the other two still make the quorum.
    acquire_round round(3, false);
    round.begin("tok", t0);
    (void)round.count(0, vote::granted, 0);
    BOOST_TEST((round.count(1, vote::failed, 0).what == action::none));
    BOOST_TEST((round.count(2, vote::granted, 0).what == action::grant));
}

BOOST_AUTO_TEST_CASE(a_given_up_acquisition_names_its_cause) {
    using redlock::detail::acquisition_error;
    using redlock::detail::describe_acquisition_error;
    using redlock::detail::vote_tally;
    const auto unreachable = make_error_code(error::quorum_unreachable);
    const auto refused = make_error_code(error::server_error);

    // Denied by a majority: another owner holds it; after a wait, the wait ran out.
    vote_tally denied(5);
    for (auto v : {vote::denied, vote::denied, vote::denied, vote::failed, vote::failed})
        denied.add(v);
    BOOST_TEST(
        (acquisition_error(error::not_acquired, denied, unreachable, false, false) == error::not_acquired));
    BOOST_TEST(
        (acquisition_error(error::not_acquired, denied, unreachable, true, false) == error::wait_timeout));

    // More nodes failed than a quorum can spare: unreachable, in the report's words (every failed
    // node refused: server_error), or too few replicas when a grant lacked them.
    vote_tally failed(5);
    for (auto v : {vote::denied, vote::denied, vote::failed, vote::failed, vote::failed})
        failed.add(v);
    BOOST_TEST((acquisition_error(error::not_acquired, failed, unreachable, true, false) ==
                error::quorum_unreachable));
    BOOST_TEST(
        (acquisition_error(error::not_acquired, failed, refused, false, false) == error::server_error));
    BOOST_TEST(
        (acquisition_error(error::not_acquired, failed, unreachable, false, true) == error::not_replicated));
    BOOST_TEST((acquisition_error(error::validity_expired, failed, unreachable, true, true) ==
                error::validity_expired));

    BOOST_TEST(describe_acquisition_error(error::wait_timeout) ==
               "still held by another owner when the wait ran out");
    BOOST_TEST(describe_acquisition_error(error::not_replicated) ==
               "too few replicas acknowledged the grant");
    BOOST_TEST(describe_acquisition_error(error::invalid_config) ==
               make_error_code(error::invalid_config).message());
}

BOOST_AUTO_TEST_SUITE_END()
