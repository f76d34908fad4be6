// SPDX-License-Identifier: BSL-1.0
// The waits of an acquisition between its rounds: after a lost round, the cleanups, then a
// sleep that a timer, a release message or a hand-off ends (see wait_policy for how long, and
// acquire_fsm.cpp for the rounds).
#include "lock/acquire/acquire_fsm.hpp"
#include <redlock/error.hpp>

#include <algorithm>
#include <random>

namespace redlock::detail {

void acquire_fsm::fail_round(boost::system::error_code cause) {
    const auto quorum = round_.tally().quorum();
    // Nodes in a quarantine that outlasts the wait: the caller learns it now, not at the end.
    const bool quarantined_past_wait = waits_ && now_ < deadline_ && !report_.no_quorum_ever(quorum) &&
                                       report_.no_quorum_before(quorum, deadline_);
    if (!waits_ || now_ >= deadline_ || is_callers_mistake(report_.unreachable_cause()) ||
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
        auto& cleanup = new_call();
        kind_->round_cleanup(round_.token(), round_.ticket(), cleanup);
        send(cleanup, &nodes(std::move(mask)), setup_.node_timeout, acquire_event::type::cleanup_done);
    }
    const auto time_left = std::chrono::ceil<milliseconds>(deadline_ - now_);
    auto next = policy_.after_failed_round(cause, round_.tally().granted() > 0, round_.ticket() != 0,
                                           time_left, *rng_);
    // A trace that lapses after its round is renewed by the next one before it does.
    if (between_.lapses_after > milliseconds::zero())
        next.delay =
            std::min<clock::duration>(next.delay, std::max(milliseconds(1), between_.lapses_after / 3));
    // Registered before the wait begins, so that no message is missed.
    listen_on(next.listen);
    sleep_for(next.delay);
}

void acquire_fsm::late_split() {
    if (done_ || !sleeping_) return;
    const auto time_left = std::chrono::ceil<milliseconds>(deadline_ - now_);
    if (auto next = policy_.after_late_split(time_left, *rng_)) {
        listen_on(next->listen);
        end_sleep_by(now_ + next->delay);
    }
}

void acquire_fsm::on_released() {
    if (done_) return;
    if (!sleeping_) {
        // The release came while our try was on its way: if the try fails, it may have
        // been refused before the release; try once more at once.
        policy_.woken_during_round();
        return;
    }
    const auto wake = policy_.after_release();
    if (wake.at_once) {
        end_sleep_now();
        maybe_next_round();
        return;
    }
    std::uniform_int_distribution<clock::rep> pick(0, wake.within.count());
    end_sleep_by(now_ + clock::duration(pick(*rng_)));
}

void acquire_fsm::on_subscribed() {
    // If we sleep, our last round may have run on a node before the SSUBSCRIBE: try once more.
    // While a round is on its way, no: a node writes its replies in the order it runs the
    // commands, so that round most likely ran after it.
    if (done_ || !sleeping_) return;
    on_released();
}

void acquire_fsm::on_handoff(std::size_t node, std::string_view round_token) {
    if (done_) return;
    // fair.lua handed the lock over to our place on `node`: the lock is ours without a round
    // trip once a quorum has handed it over, while we wait after the very round that registered
    // the hand-offs (whose start bounds when that was), its cleanups done. Any other hand-off
    // wakes us: the next round takes it over. With lock_options::replicas a hand-off is taken
    // by the next round, whose grant waits for the replicas: a WAIT of ours would not cover the
    // releaser's write.
    if (!sleeping_ || cleanups_pending_ > 0 || round_token != round_.token() || node >= setup_.nodes ||
        options_.replicas > 0) {
        on_released();
        return;
    }
    if (!context_.votes(node, keys().lock)) return;
    const auto handed = round_.hand_over(node);
    if (handed == 0) return;
    // Its release granted it to us: what diagnostics list as the nodes that granted.
    report_.record(node, vote::granted, {}, {});
    const auto verdict = judge_handoff(handed, round_.tally().quorum(), options_.ttl, options_.queue_timeout,
                                       now_ - round_.started(), setup_.drift_factor, options_.min_validity);
    if (verdict.what == handoff_verdict::action::wait_for_more) {
        // The other nodes' releases come within about a round of ours; if they do not (a
        // message lost, another head there), the next round takes over what we have.
        end_sleep_by(now_ + policy_.split_spread());
        return;
    }
    if (verdict.what == handoff_verdict::action::try_round) {
        on_released();  // a round takes it over with the full ttl
        return;
    }
    end_sleep_now();
    handed_over_to_us_ = true;
    // The nodes that did not hand over still queue us: succeed() takes us out there.
    round_.take_handoff(between_.place);
    // As the round counts it: a grant of this round's on a node that did not hand over was
    // given back when the round failed.
    const auto refused = round_.refused();
    for (std::size_t i = 0; i < refused.size(); ++i)
        if (refused[i]) report_.given_back(i);
    succeed(now_ + verdict.left, handed, verdict.extend_now);
}

void acquire_fsm::on_subscription_refused(std::string_view why) {
    // From now on we wait as wait_strategy::spin does (the retry backoff), and the refusal is
    // in the message of the acquire's diagnostics.
    if (done_ || !policy_.subscription_refused()) return;
    subscription_refused_ = "; waited by polling: a node refused the SSUBSCRIBE (" + std::string(why) + ")";
    if (sleeping_) on_released();
}

void acquire_fsm::on_sleep_ended(unsigned sleep) {
    if (!sleeping_ || sleep != sleep_) return;  // a sleep that was ended or moved
    sleeping_ = false;
    maybe_next_round();
}

void acquire_fsm::maybe_next_round() {
    if (!done_ && !sleeping_ && cleanups_pending_ == 0) start_round();
}

void acquire_fsm::sleep_for(clock::duration delay) {
    sleeping_ = true;
    wake_at_ = now_ + delay;
    auto& a = act(acquire_action::type::sleep_until);
    a.at = wake_at_;
    a.sleep = ++sleep_;
}

void acquire_fsm::end_sleep_by(clock::time_point at) {
    if (!sleeping_ || at >= wake_at_) return;
    wake_at_ = at;
    auto& a = act(acquire_action::type::sleep_until);
    a.at = at;
    a.sleep = ++sleep_;
}

void acquire_fsm::end_sleep_now() {
    if (!sleeping_) return;
    sleeping_ = false;
    ++sleep_;
    act(acquire_action::type::end_sleep);
}

void acquire_fsm::listen_on(wait_policy::channel channel) {
    const std::string* on = nullptr;
    if (channel == wait_policy::channel::released) on = &kind_->released_channel(blocked_by_);
    if (channel == wait_policy::channel::wake) on = &wake_channel_;
    if (!on) return;
    auto& a = act(acquire_action::type::listen);
    a.channel = on;
    a.listed = channel == wait_policy::channel::released;
}

}  // namespace redlock::detail
