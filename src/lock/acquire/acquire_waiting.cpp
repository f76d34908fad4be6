// SPDX-License-Identifier: BSL-1.0
// The waits of an acquisition between its rounds: after a lost round, the cleanups, then a
// sleep that a timer, a release message or a hand-off ends (see wait_policy for how long, and
// acquire_op.cpp for the rounds).
#include "lock/acquire/acquire_op.hpp"
#include <redlock/error.hpp>

#include <algorithm>
#include <random>

namespace redlock::detail {

void acquire_op::fail_round(error_code cause) {
    const auto now = clock::now();
    const auto quorum = round_.tally().quorum();
    // Nodes in a quarantine that outlasts the wait: the caller learns it now, not at the end.
    const bool quarantined_past_wait = waits_ && now < deadline_ && !report_.no_quorum_ever(quorum) &&
                                       report_.no_quorum_before(quorum, deadline_);
    if (!waits_ || now >= deadline_ || is_callers_mistake(report_.unreachable_cause()) ||
        report_.no_quorum_ever(quorum) || quarantined_past_wait) {
        leave();
        // A round lost early to denials may still be one in which most nodes are down (the
        // denials then come from other contenders' doomed attempts). The last round hears
        // every node out, at most one node timeout, so that the error names the real cause.
        if (cause == error::not_acquired && !round_.tally().all_answered()) {
            round_.await_stragglers(cause);
            return;
        }
        finish_failed(cause, quarantined_past_wait ? "; no quorum of nodes votes before the wait ends" : "");
        return;
    }
    // The next attempt waits for this one's releases as well as for the delay: a release
    // whose EVALSHA met NOSCRIPT is re-sent as EVAL, and must not overtake the next SET.
    auto mask = round_.nodes_to_release();
    cleanups_pending_ = static_cast<int>(std::count(mask.begin(), mask.end(), true));
    if (cleanups_pending_ > 0) {
        node_call cleanup;
        kind_->round_cleanup(round_.token(), round_.ticket(), cleanup);
        client_->send_call(cleanup, mask, node_timeout_,
                           [self = shared_from_this()](std::size_t, error_code, resp::value) {
                               --self->cleanups_pending_;
                               self->maybe_next_round();
                           });
    }
    const auto time_left = std::chrono::ceil<milliseconds>(deadline_ - now);
    auto next = policy_->after_failed_round(cause, round_.tally().granted() > 0, round_.ticket() != 0,
                                            time_left, client_->rng());
    // A waiting writer's mark lapses queue_timeout after its round: the next renews it.
    if (kind_->marks_waiting())
        next.delay =
            std::min<clock::duration>(next.delay, std::max(milliseconds(1), options_.queue_timeout / 3));
    // Registered before the wait begins, so that no message is missed.
    listen_on(next.listen);
    sleep_.sleep_for(next.delay, next_round_after_sleep());
}

void acquire_op::late_split() {
    if (done_ || !sleep_.sleeping()) return;
    const auto time_left = std::chrono::ceil<milliseconds>(deadline_ - clock::now());
    if (auto next = policy_->after_late_split(time_left, client_->rng())) {
        listen_on(next->listen);
        sleep_.end_by(clock::now() + next->delay, next_round_after_sleep());
    }
}

void acquire_op::on_released() {
    if (done_) return;
    if (!sleep_.sleeping()) {
        // The release came while our try was on its way: if the try fails, it may have
        // been refused before the release; try once more at once.
        policy_->woken_during_round();
        return;
    }
    const auto wake = policy_->after_release();
    if (wake.at_once) {
        // From here: a hop through the timer's completion would add a turn of the event loop.
        sleep_.end_now();
        maybe_next_round();
        return;
    }
    std::uniform_int_distribution<clock::rep> pick(0, wake.within.count());
    sleep_.end_by(clock::now() + clock::duration(pick(client_->rng())), next_round_after_sleep());
}

void acquire_op::on_subscribed() {
    if (done_ || !sleep_.sleeping()) return;
    on_released();
}

void acquire_op::on_handoff(std::size_t node, std::string_view round_token) {
    if (done_) return;
    // With lock_options::replicas a hand-off is taken by the next round, whose grant waits
    // for the replicas: a WAIT of ours would not cover the releaser's write.
    if (!sleep_.sleeping() || cleanups_pending_ > 0 || round_token != round_.token() ||
        node >= client_->node_count() || options_.replicas > 0) {
        on_released();
        return;
    }
    if (!client_->votes(node, keys().lock)) return;
    const auto handed = round_.hand_over(node);
    if (handed == 0) return;
    // Its release granted it to us: what diagnostics list as the nodes that granted.
    report_.record(node, vote::granted, {}, {});
    const auto now = clock::now();
    const auto verdict =
        judge_handoff(handed, round_.tally().quorum(), options_.ttl, options_.queue_timeout,
                      now - round_.started(), client_->config().drift_factor, options_.min_validity);
    if (verdict.what == handoff_verdict::action::wait_for_more) {
        // The other nodes' releases come within about a round of ours; if they do not (a
        // message lost, another head there), the next round takes over what we have.
        sleep_.end_by(now + policy_->split_spread(), next_round_after_sleep());
        return;
    }
    if (verdict.what == handoff_verdict::action::try_round) {
        on_released();  // a round takes it over with the full ttl
        return;
    }
    sleep_.end_now();
    handed_over_to_us_ = true;
    // The nodes that did not hand over still queue us: succeed() takes us out there.
    round_.take_handoff(kind_->place());
    // As the round counts it: a grant of this round's on a node that did not hand over was
    // given back when the round failed.
    const auto refused = round_.refused();
    for (std::size_t i = 0; i < refused.size(); ++i)
        if (refused[i]) report_.given_back(i);
    succeed(now, now + verdict.left, handed, verdict.extend_now);
}

void acquire_op::listen_on(wait_policy::channel channel) {
    if (channel == wait_policy::channel::released) listen_on(kind_->released_channel(blocked_by_));
    if (channel == wait_policy::channel::wake) listen_on(wake_channel_);
}

void acquire_op::listen_on(const std::string& channel) {
    auto& listener = client_->listener();
    const auto previous = waiter_;
    const auto* previous_channel = waiter_channel_;
    waiter_ = listener.add(channel, weak_from_this());
    if (previous != 0) listener.remove(*previous_channel, previous);
    waiter_channel_ = &channel;
}

void acquire_op::on_subscription_refused(std::string_view why) {
    if (done_ || !policy_->subscription_refused()) return;
    subscription_refused_ = "; waited by polling: a node refused the SSUBSCRIBE (" + std::string(why) + ")";
    if (sleep_.sleeping()) on_released();
}

void acquire_op::maybe_next_round() {
    if (!done_ && !sleep_.sleeping() && cleanups_pending_ == 0) start_round();
}

}  // namespace redlock::detail
