// SPDX-License-Identifier: BSL-1.0
// How a waiting acquire waits between rounds (wait_policy) and what a fair waiter does with
// hand-offs (judge_handoff): I/O-free, driven by what rounds report, with a seeded generator.
#include "lock/acquire/wait_policy.hpp"

#include <redlock/error.hpp>

#include <boost/test/unit_test.hpp>

#include <random>

using namespace std::chrono_literals;
using redlock::error;
using redlock::retry_config;
using redlock::detail::handoff_verdict;
using redlock::detail::judge_handoff;
using redlock::detail::wait_policy;
using channel = wait_policy::channel;

namespace {

retry_config retry(std::chrono::milliseconds min, std::chrono::milliseconds max) {
    retry_config r;
    r.min_delay = min;
    r.max_delay = max;
    return r;
}

// A notify waiter over `nodes` nodes whose rounds take `round`.
wait_policy notify_policy(std::size_t nodes, std::chrono::microseconds round = 300us) {
    wait_policy p(true, false, nodes, retry(10ms, 50ms), 5000ms);
    p.round_decided(round);
    return p;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(wait_policy_test)

BOOST_AUTO_TEST_CASE(a_spinning_waiter_waits_the_retry_backoff_and_listens_to_nothing) {
    std::mt19937_64 rng(1);
    wait_policy p(false, false, 3, retry(10ms, 50ms), 5000ms);
    BOOST_TEST(!p.notifies());
    for (int i = 0; i < 50; ++i) {
        p.round_started();
        p.holder_pttl(2);  // a spinner does not wait by the holder
        const auto next = p.after_failed_round(error::not_acquired, i % 2 == 0, false, 10000ms, rng);
        BOOST_TEST((next.listen == channel::none));
        BOOST_TEST((next.delay >= 10ms && next.delay <= 50ms));
    }
    // Never beyond what is left of the wait.
    BOOST_TEST((p.after_failed_round(error::not_acquired, false, false, 3ms, rng).delay <= 3ms));
}

BOOST_AUTO_TEST_CASE(a_notify_waiter_sleeps_for_a_message_capped_by_the_holders_pttl) {
    std::mt19937_64 rng(2);
    auto p = notify_policy(3);
    BOOST_TEST(p.notifies());
    // No PTTL known: the cap is max_delay, doubling per wait up to 8x.
    const std::chrono::milliseconds caps[] = {50ms, 100ms, 200ms, 400ms, 400ms};
    for (auto cap : caps) {
        p.round_started();
        const auto next = p.after_failed_round(error::not_acquired, false, false, 10000ms, rng);
        BOOST_TEST((next.listen == channel::released));
        BOOST_TEST((next.delay == cap));
    }
    // The holder's key expires sooner: wake then. The smallest PTTL of the round counts; -1
    // (no expiry) bounds nothing; 0 or -2 (expired meanwhile) means almost at once.
    p.round_started();
    p.holder_pttl(30);
    p.holder_pttl(-1);
    p.holder_pttl(20);
    BOOST_TEST((p.after_failed_round(error::not_acquired, false, false, 10000ms, rng).delay == 20ms));
    p.round_started();
    p.holder_pttl(-2);
    BOOST_TEST((p.after_failed_round(error::not_acquired, false, false, 10000ms, rng).delay == 1ms));
    // A round that failed for another cause than contention waits the backoff, no message.
    p.round_started();
    const auto unreachable = p.after_failed_round(error::quorum_unreachable, false, false, 10000ms, rng);
    BOOST_TEST((unreachable.listen == channel::none));
    BOOST_TEST((unreachable.delay >= 10ms && unreachable.delay <= 50ms));
}

BOOST_AUTO_TEST_CASE(a_wake_up_during_the_round_makes_the_next_wait_none) {
    std::mt19937_64 rng(3);
    auto p = notify_policy(3);
    p.round_started();
    p.woken_during_round();
    const auto next = p.after_failed_round(error::not_acquired, false, false, 10000ms, rng);
    BOOST_TEST((next.delay == 0ms));
    BOOST_TEST((next.listen == channel::released));  // still registered for the next release
    // The next round starts afresh.
    p.round_started();
    BOOST_TEST((p.after_failed_round(error::not_acquired, false, false, 10000ms, rng).delay > 0ms));
}

BOOST_AUTO_TEST_CASE(a_split_round_retries_soon_after_a_spread_that_doubles_per_split_in_a_row) {
    std::mt19937_64 rng(4);
    auto p = notify_policy(5, 400us);  // spread: two rounds, 800 us
    BOOST_TEST((p.split_spread() == 800us));
    std::chrono::steady_clock::duration step = 800us;
    for (int split = 0; split < 4; ++split) {
        p.round_started();
        const auto next = p.after_failed_round(error::not_acquired, true, false, 10000ms, rng);
        BOOST_TEST((next.listen == channel::released));
        BOOST_TEST((next.delay >= step / 2 && next.delay <= step), "split " << split);
        BOOST_TEST(p.last_round_split());
        step *= 2;
    }
    // Capped by the holder's PTTL and by max_delay.
    p.round_started();
    p.holder_pttl(3);
    BOOST_TEST((p.after_failed_round(error::not_acquired, true, false, 10000ms, rng).delay <= 3ms));
    for (int i = 0; i < 10; ++i) {
        p.round_started();
        BOOST_TEST((p.after_failed_round(error::not_acquired, true, false, 10000ms, rng).delay <= 50ms));
    }
    // A round that was not split resets the doubling.
    p.round_started();
    p.after_failed_round(error::not_acquired, false, false, 10000ms, rng);
    p.round_started();
    BOOST_TEST((p.after_failed_round(error::not_acquired, true, false, 10000ms, rng).delay <= 800us));
    // The spread is two rounds, within [100 us, 2 ms].
    p.round_decided(10us);
    BOOST_TEST((p.split_spread() == 100us));
    p.round_decided(5ms);
    BOOST_TEST((p.split_spread() == 2ms));
}

BOOST_AUTO_TEST_CASE(a_release_message_wakes_at_once_unless_a_herd_may_split_the_nodes) {
    std::mt19937_64 rng(5);
    auto single = notify_policy(1);
    single.after_failed_round(error::not_acquired, true, false, 10000ms, rng);
    BOOST_TEST(single.after_release().at_once);

    auto p = notify_policy(3, 500us);
    p.after_failed_round(error::not_acquired, false, false, 10000ms, rng);
    BOOST_TEST(p.after_release().at_once);
    p.round_started();
    p.after_failed_round(error::not_acquired, true, false, 10000ms, rng);
    const auto wake = p.after_release();
    BOOST_TEST(!wake.at_once);
    BOOST_TEST((wake.within == 1ms));

    wait_policy fair(true, true, 3, retry(10ms, 50ms), 900ms);
    fair.after_failed_round(error::not_acquired, true, true, 10000ms, rng);
    BOOST_TEST(fair.after_release().at_once);  // woken alone on its own channel
}

BOOST_AUTO_TEST_CASE(a_late_grant_turns_a_wait_for_a_message_into_the_short_one_after_a_split) {
    std::mt19937_64 rng(6);
    auto p = notify_policy(3, 500us);
    p.round_started();
    p.after_failed_round(error::not_acquired, false, false, 10000ms, rng);
    BOOST_TEST(!p.last_round_split());
    const auto next = p.after_late_split(10000ms, rng);
    BOOST_REQUIRE(next.has_value());
    BOOST_TEST((next->delay >= 500us && next->delay <= 1ms));
    BOOST_TEST((next->listen == channel::released));
    BOOST_TEST(p.last_round_split());
    // Once only: the wait is no longer the one for a message.
    BOOST_TEST(!p.after_late_split(10000ms, rng).has_value());
    // After a split round the wait was short already: nothing to change.
    p.round_started();
    p.after_failed_round(error::not_acquired, true, false, 10000ms, rng);
    BOOST_TEST(!p.after_late_split(10000ms, rng).has_value());
    // No time left: nothing.
    p.round_started();
    p.after_failed_round(error::not_acquired, false, false, 10000ms, rng);
    BOOST_TEST(!p.after_late_split(0ms, rng).has_value());
}

BOOST_AUTO_TEST_CASE(a_refused_subscription_makes_a_notify_waiter_poll) {
    std::mt19937_64 rng(7);
    auto p = notify_policy(3);
    BOOST_TEST(p.subscription_refused());
    BOOST_TEST(!p.subscription_refused());  // once
    BOOST_TEST(!p.notifies());
    p.round_started();
    const auto next = p.after_failed_round(error::not_acquired, false, false, 10000ms, rng);
    BOOST_TEST((next.listen == channel::none));
    BOOST_TEST((next.delay >= 10ms && next.delay <= 50ms));
}

BOOST_AUTO_TEST_CASE(a_fair_waiter_refreshes_its_place_every_third_of_queue_timeout) {
    std::mt19937_64 rng(8);
    wait_policy p(true, true, 3, retry(10ms, 50ms), 900ms);
    // Not queued yet: numbered by a quorum first, so the next round queues at once once the
    // ticket is known, after the backoff if not.
    p.round_started();
    p.queued_this_round(false);
    BOOST_TEST((p.after_failed_round(error::not_acquired, false, true, 10000ms, rng).delay == 0ms));
    p.round_started();
    p.queued_this_round(false);
    const auto unticketed = p.after_failed_round(error::not_acquired, false, false, 10000ms, rng);
    BOOST_TEST((unticketed.delay >= 10ms && unticketed.delay <= 50ms));
    // Queued: woken on its own channel, or refreshes after queue_timeout / 3.
    p.round_started();
    p.queued_this_round(true);
    auto next = p.after_failed_round(error::not_acquired, false, true, 10000ms, rng);
    BOOST_TEST((next.listen == channel::wake));
    BOOST_TEST((next.delay == 300ms));
    // At the head, also when the holder's lease would expire; elsewhere the holder is no bound.
    p.round_started();
    p.queued_this_round(true);
    p.holder_pttl(120);
    BOOST_TEST((p.after_failed_round(error::not_acquired, false, true, 10000ms, rng).delay == 300ms));
    p.round_started();
    p.queued_this_round(true);
    p.holder_pttl(120);
    p.at_queue_head();
    BOOST_TEST((p.after_failed_round(error::not_acquired, false, true, 10000ms, rng).delay == 120ms));
    // Unreachable nodes: no message to wait for, the backoff.
    p.round_started();
    p.queued_this_round(true);
    next = p.after_failed_round(error::quorum_unreachable, false, true, 10000ms, rng);
    BOOST_TEST((next.listen == channel::none));
    BOOST_TEST((next.delay >= 10ms && next.delay <= 50ms));
}

BOOST_AUTO_TEST_CASE(hand_offs_from_a_quorum_are_the_lock_while_enough_validity_is_left) {
    using action = handoff_verdict::action;
    // 2 of 5 nodes: wait for the others.
    BOOST_TEST((judge_handoff(2, 3, 3000ms, 5000ms, 1ms, 0.01, 0ms).what == action::wait_for_more));
    // 3 of 5, 10 ms after the round started: the lock for ttl - 10 ms - drift.
    auto v = judge_handoff(3, 3, 3000ms, 5000ms, 10ms, 0.01, 0ms);
    BOOST_TEST((v.what == action::take));
    BOOST_TEST((v.left == 3000ms - 10ms - 32ms));
    BOOST_TEST(!v.extend_now);
    // The place's deadline (queue_timeout) ends the hand-off's lock before the ttl would.
    v = judge_handoff(3, 3, 3000ms, 1200ms, 10ms, 0.01, 0ms);
    BOOST_TEST((v.what == action::take));
    BOOST_TEST((v.left == 1200ms - 10ms - 14ms));
    BOOST_TEST(v.extend_now);  // less than two thirds of the ttl: extend at once
    // Too little left, or not above min_validity: a round takes it over with the full ttl.
    BOOST_TEST((judge_handoff(3, 3, 100ms, 5000ms, 99ms, 0.01, 0ms).what == action::try_round));
    BOOST_TEST((judge_handoff(3, 3, 3000ms, 5000ms, 10ms, 0.01, 3000ms).what == action::try_round));
}

BOOST_AUTO_TEST_SUITE_END()
