// SPDX-License-Identifier: BSL-1.0
// The rounds of an acquisition: what the lock's kind builds goes out, the answers it reads are
// counted by acquire_round, and its steps are run; a won round becomes the lease to hand over.
// The waits between rounds are in acquire_fsm_waits.cpp; the class is in acquire_fsm.hpp.
#include "lock/acquire/acquire_fsm.hpp"

#include <redlock/error.hpp>

#include <algorithm>
#include <cerrno>
#include <exception>
#include <utility>

namespace redlock::detail {

using boost::system::error_code;

namespace {
// Asio's operation_aborted, as every cancelled operation completes, without Asio: ECANCELED in
// the system category is what Asio makes of it on POSIX.
error_code operation_aborted() noexcept {
    return error_code(ECANCELED, boost::system::system_category());
}
}  // namespace

acquire_fsm::acquire_fsm(acquire_setup setup, acquire_context& context)
    : setup_(std::move(setup)),
      context_(context),
      kind_(setup_.kind),
      options_(setup_.options),
      between_(kind_->kept_between_rounds()),
      round_(setup_.nodes, options_.fenced, std::max<std::size_t>(setup_.resources.size(), 1)),
      policy_(options_.wait > milliseconds::zero() && options_.waiting == wait_strategy::notify,
              between_.queued, setup_.nodes, options_.retry ? *options_.retry : setup_.client_retry,
              options_.queue_timeout),
      report_(context.node_names(), "acquire", setup_.resource),
      waits_(options_.wait > milliseconds::zero()) {}

acquire_fsm::actions& acquire_fsm::resume(const acquire_event& e, clock::time_point now,
                                          std::mt19937_64& rng) {
    // The last resume's actions have run: their calls went out.
    out_.clear();
    outbox_.reset();
    outbox_strings_.reset();
    node_sets_.reset();
    now_ = now;
    rng_ = &rng;
    using type = acquire_event::type;
    switch (e.what) {
        case type::start:
            start();
            break;
        case type::answer:
            on_round_reply(e);
            break;
        case type::takeover_answer:
            on_takeover_reply(e);
            break;
        case type::replicas_confirmed:
            if (counting(e.round) && e.verdict) {
                auto v = *e.verdict;
                count(e.node, v.ec ? vote::failed : vote::granted, v.ec, std::move(v.detail));
            }
            break;
        case type::writeback_answer:
            on_writeback_reply(e);
            break;
        case type::cleanup_done:
            --cleanups_pending_;
            maybe_next_round();
            break;
        case type::sleep_ended:
            on_sleep_ended(e.sleep);
            break;
        case type::released:
            on_released();
            break;
        case type::handoff:
            on_handoff(e.node, e.text);
            break;
        case type::subscribed:
            on_subscribed();
            break;
        case type::subscription_refused:
            on_subscription_refused(e.text);
            break;
        case type::cancel:
            cancel();
            break;
    }
    return out_;
}

void acquire_fsm::start() {
    if (done_) return;  // cancelled before it started
    if (between_.queued) wake_channel_ = between_.wake_channel;
    started_ = now_;
    deadline_ = started_ + options_.wait;
    // Only a queued waiter is ever woken on this channel: subscribed before the round
    // that queues us, it misses no wake-up.
    if (between_.queued && policy_.notifies()) listen_on(wait_policy::channel::wake);
    start_round();
}

void acquire_fsm::cancel() {
    if (done_) return;
    // Mid-attempt, any node may still grant: release wherever that can happen. A round that
    // won but still settles its fence holds the lock on a quorum. A fair waiter also holds
    // a place in the queue between attempts, and a waiting writer its mark.
    if (round_.may_hold() || (round_.number() > 0 && waits_between_rounds())) leave();
    end_sleep_now();
    finish(operation_aborted(), "acquire \"" + setup_.resource + "\": cancelled after " +
                                    std::to_string(round_.number()) + " attempt(s)");
}

void acquire_fsm::start_round() {
    // Each round writes a token of its own. A round's cleanup may reach a node after the next
    // round's request does (sent on a connection given up for a new one, whose bytes were still
    // on their way): with one token for all rounds it would delete the later round's grant.
    std::string token = kind_->round_value(round_.number() + 1);
    if (token.empty()) {
        try {
            token = context_.new_token(options_.label);
        } catch (const std::exception& e) {
            finish(error::internal, e.what());
            return;
        }
    }
    // t0 before the first send, so time the commands spend queued counts against the validity.
    round_suspended_ = context_.suspended_so_far();
    round_.begin(std::move(token), now_);
    policy_.round_started();
    report_.reset();
    context_.metrics().attempts.fetch_add(1, std::memory_order_relaxed);
    const round_request request{round_.token(), round_.previous_token(), policy_.notifies(),
                                waits_,         round_.ticket(),         round_.tally().quorum() == 1};
    if (between_.queued) policy_.queued_this_round(waits_ && (request.ticket != 0 || request.single_node));
    call_.clear();
    kind_->acquire(request, call_);
    call_.wait_for_replicas(options_.replicas, options_.replica_timeout);
    call_.ask_replication_id(setup_.asks_replication_id);
    // A pipelined WAIT holds the node for up to replica_timeout.
    send(call_, nullptr, call_.timeout(setup_.node_timeout, options_.replica_timeout),
         acquire_event::type::answer);
}

bool acquire_fsm::counting(unsigned round) const {
    return !done_ && round == round_.number() && round_.counting();
}

void acquire_fsm::on_round_reply(const acquire_event& e) {
    if (e.round != round_.number()) return;
    auto answer = kind_->read_acquire(call_, e.ec, e.replies);
    if (answer.verdict == vote::granted && !answer.replication) {
        answer.replication =
            judge_pinned_wait(call_.wait_reply, e.replies, options_.replicas, options_.replica_timeout, "");
    }
    // A call run in steps judges each step's master itself (slot_step_run.cpp).
    const auto id_reply = context_.runs_steps(e.node, call_) ? 0 : call_.replication_id_reply;
    context_.judge_answer(e.node, answer, id_reply, e.replies);
    on_answer(e.node, std::move(answer));
}

void acquire_fsm::on_answer(std::size_t node, acquire_answer a) {
    const bool granted = a.verdict == vote::granted;
    // A node that granted after the fence was settled is written back too; the grant no
    // longer waits for it.
    if (granted && a.fence && !round_.counting() && round_.late_grant_behind(a.all_fences()))
        write_back(node);
    if (done_) {
        // A straggler of the round that won: if it did not grant, it may still queue us.
        if (round_.has_succeeded() && leaves_refusers() && !granted) dequeue(only_node(node));
        return;
    }
    if (between_.queued) {
        round_.answered(node, granted);
        // Even after the round is decided: a straggler's ticket may still complete the quorum.
        if (a.place) note_place(*a.place);
    }
    if (!round_.counting()) {
        if (granted) late_split();
        return;
    }
    if (!between_.queued) round_.answered(node, granted);  // a queued round recorded it above
    if (a.verdict == vote::failed) {
        if (a.node_fault) context_.metrics().node_failure(node, a.ec);
        count(node, vote::failed, a.ec, std::move(a.detail));
    } else if (granted) {
        round_.granted(node, a.all_fences(), a.numbered);
        if (auto& r = a.replication) {
            if (r->ec == error::unexpected_reply) context_.metrics().node_failure(node, r->ec);
            count(node, r->ec ? vote::failed : vote::granted, r->ec, std::move(r->detail));
        } else {
            count_grant(node);
        }
    } else if (!a.held_by.empty() && round_.is_earlier_token(a.held_by)) {
        held_by_earlier_round(node, a.held_by);
    } else {
        round_.contended();
        if (a.holder_pttl) policy_.holder_pttl(*a.holder_pttl);
        blocked_by_ = a.blocked_by;
        count(node, vote::denied, {}, {});
    }
}

void acquire_fsm::note_place(queue_place place) {
    if (place.rank == 0) policy_.at_queue_head();
    // The round was decided before the ticket was known (see wait_policy::fair_wait): queue now.
    if (round_.note_ticket(place.ticket, waits_)) end_sleep_by(now_);
}

void acquire_fsm::held_by_earlier_round(std::size_t node, const std::string& answered) {
    // The call points into the token: kept until it is sent, after the answer is gone.
    auto& earlier = outbox_strings_.next();
    earlier = answered;
    auto& call = new_call();
    if (left_) {
        // The final round's straggler, after our release went out: a takeover now would write
        // a full ttl that nobody releases. Free the earlier round's key.
        kind_->release(earlier, false, call);
        send(call, &only_node(node), setup_.background_timeout);
        count(node, vote::failed, error::reply_lost, "held by an earlier round of ours, released");
        return;
    }
    if (!kind_->take_over(earlier, round_.token(), call)) {
        count(node, vote::denied, {}, {});
        return;
    }
    call.wait_for_replicas(options_.replicas, options_.replica_timeout);
    call.ask_replication_id(setup_.asks_replication_id);
    takeover_wait_reply_ = call.wait_reply;
    takeover_id_reply_ = call.replication_id_reply;
    send(call, &only_node(node), call.timeout(setup_.node_timeout, options_.replica_timeout),
         acquire_event::type::takeover_answer);
}

void acquire_fsm::on_takeover_reply(const acquire_event& e) {
    if (!counting(e.round)) return;
    if (e.ec) {
        count(e.node, vote::failed, e.ec, e.replies.empty() ? "" : e.replies.front().str);
    } else if (e.replies.front().kind == resp::type::integer && e.replies.front().integer == 1) {
        error_code refused;
        if (auto why = context_.why_answer_does_not_count(e.node, takeover_id_reply_, e.replies, refused);
            !why.empty()) {
            count(e.node, vote::failed, refused, std::move(why));
            return;
        }
        count_grant(e.node, judge_pinned_wait(takeover_wait_reply_, e.replies, options_.replicas,
                                              options_.replica_timeout, ""));
    } else {
        round_.contended();
        count(e.node, vote::denied, {}, {});
    }
}

void acquire_fsm::count_grant(std::size_t node, std::optional<replication_verdict> pinned) {
    if (options_.replicas == 0) {
        count(node, vote::granted, {}, {});
        return;
    }
    if (pinned) {
        count(node, pinned->ec ? vote::failed : vote::granted, pinned->ec, std::move(pinned->detail));
        return;
    }
    auto& a = act(acquire_action::type::confirm_replicas);
    a.node = node;
    a.round = round_.number();
    a.key = keys().lock;
    a.replicas = options_.replicas;
    a.replica_timeout = options_.replica_timeout;
    a.timeout = setup_.node_timeout;
}

void acquire_fsm::count(std::size_t node, vote v, error_code ec, std::string detail) {
    if (ec == error::not_replicated) replication_short_ = true;
    context_.admit(node, keys().lock, v, ec, detail);
    // On a cluster, several resources' grant counts only if the master of each one's slot votes.
    for (auto key : kind_->lock_keys())
        context_.admit(node, key, v, ec, detail);
    report_.record(node, v, ec, std::move(detail));
    if (ec == error::node_quarantined) {
        auto left = context_.quarantine_left(node, keys().lock);
        for (auto key : kind_->lock_keys())
            left = std::max(left, context_.quarantine_left(node, key));
        if (left > milliseconds::zero()) report_.quarantined_until(node, now_ + left);
    }
    std::uint64_t outer_fence = 0;  // the fence of this client's live hold that the round may enter
    if (kind_->reenters_fenced())
        outer_fence = context_.live_fence(keys().lock, std::string(kind_->owner()), now_);
    run(round_.count(node, v, outer_fence));
}

void acquire_fsm::run(const acquire_round::step& s) {
    if (s.decided) {
        if (round_.was_contended()) {
            context_.metrics().contended.fetch_add(1, std::memory_order_relaxed);
            found_held_ = true;
        }
        policy_.round_decided(now_ - round_.started());
    }
    for (auto node : s.write_back)
        write_back(node);
    switch (s.what) {
        case acquire_round::step::action::grant:
            grant();
            return;
        case acquire_round::step::action::fail:
            fail_round(s.cause);
            return;
        case acquire_round::step::action::give_up:
            finish_failed(s.cause);
            return;
        case acquire_round::step::action::none:
            return;
    }
}

void acquire_fsm::write_back(std::size_t node) {
    auto& call = new_call();
    kind_->write_back_fence(round_.token(), round_.fences(), call);
    // With replicas, the raised counter counts once they have it, as the grant did: a failover
    // to a replica that missed it would hand the next holder a smaller fence.
    call.wait_for_replicas(options_.replicas, options_.replica_timeout);
    writeback_wait_reply_ = call.wait_reply;
    send(call, &only_node(node), call.timeout(setup_.node_timeout, options_.replica_timeout),
         acquire_event::type::writeback_answer);
}

void acquire_fsm::on_writeback_reply(const acquire_event& e) {
    if (done_ || e.round != round_.number()) return;
    bool raised = !e.ec && e.replies.front().kind == resp::type::integer && e.replies.front().integer == 1;
    if (raised) {
        const auto replicated = judge_pinned_wait(writeback_wait_reply_, e.replies, options_.replicas,
                                                  options_.replica_timeout, "");
        raised = !replicated || !replicated->ec;
    }
    run(round_.on_writeback(raised));
}

void acquire_fsm::grant() {
    if (const auto left = round_.validity(now_, options_.ttl, setup_.drift_factor, options_.min_validity)) {
        succeed(now_ + *left, round_.tally().granted());
    } else {
        fail_round(error::validity_expired);
    }
}

void acquire_fsm::succeed(clock::time_point valid_until, std::size_t nodes_granted, bool extend_now) {
    if (leaves_refusers()) {
        // Nodes that refused may still queue (or mark) us: we no longer wait there. The nodes
        // yet to answer get it when they do (on_answer).
        const auto refused = round_.refused();
        if (std::find(refused.begin(), refused.end(), true) != refused.end()) dequeue(nodes(refused));
    }
    won_lock won{setup_.resource,
                 kind_,
                 round_.token(),
                 round_.fence(),
                 setup_.resources.empty() || !options_.fenced
                     ? std::vector<std::uint64_t>()
                     : std::vector<std::uint64_t>(round_.fences().begin(), round_.fences().end()),
                 setup_.node_timeout,
                 valid_until,
                 nodes_granted,
                 extend_now,
                 round_suspended_};
    context_.metrics().acquired.fetch_add(1, std::memory_order_relaxed);
    context_.metrics().acquire_latency.record(now_ - started_);
    // The message costs more than the rest of a grant: build it only for a caller who asked.
    std::string message;
    if (setup_.wants_grant_message)
        message = report_.grant_summary(round_.tally(), handed_over_to_us_, valid_until - now_);
    round_.succeeded();
    finish({}, std::move(message), std::move(won));
}

void acquire_fsm::dequeue(const std::vector<bool>& where) {
    auto& leave_queue = new_call();
    if (kind_->leave_queue(round_.token(), leave_queue)) send(leave_queue, &where, setup_.background_timeout);
}

void acquire_fsm::leave() {
    left_ = true;
    auto& release = new_call();
    kind_->release(round_.token(), false, release);
    send(release,
         &nodes(waits_between_rounds() ? std::vector<bool>(setup_.nodes, true) : round_.nodes_to_release()),
         setup_.background_timeout);
}

bool acquire_fsm::waits_between_rounds() const noexcept {
    return waits_ && between_.leaves_trace;
}

bool acquire_fsm::leaves_refusers() const noexcept {
    // A place is ours once numbered (only a waiter is: acquire_round::note_ticket).
    return waits_ && between_.leaves_trace && (!between_.queued || round_.ticket() != 0);
}

void acquire_fsm::finish_failed(error_code cause, std::string_view why_now) {
    const auto ec =
        acquisition_error(cause, round_.tally(), report_.unreachable_cause(), waits_, replication_short_);
    finish(ec, report_.summary(round_.tally(), describe_acquisition_error(ec).append(why_now)));
}

void acquire_fsm::finish(error_code ec, std::string message, std::optional<won_lock> won) {
    if (done_) return;
    done_ = true;
    if (ec) context_.metrics().acquire_failed(ec);
    const auto took = now_ - started_;
    if (waits_ && found_held_) context_.metrics().wait_time.record(took);
    auto& a = act(acquire_action::type::finish);
    a.ec = ec;
    a.won = std::move(won);
    a.message = std::move(message) + subscription_refused_;
    a.took = took;
    a.at = now_;
    a.handed_over = handed_over_to_us_;
}

acquire_action& acquire_fsm::act(acquire_action::type what) {
    auto& a = out_.emplace_back();
    a.what = what;
    return a;
}

node_call& acquire_fsm::new_call() {
    auto& call = outbox_.next();
    call.clear();
    return call;
}

void acquire_fsm::send(const node_call& call, const std::vector<bool>* nodes, milliseconds timeout,
                       std::optional<acquire_event::type> reply) {
    auto& a = act(acquire_action::type::send);
    a.call = &call;
    a.nodes = nodes;
    a.timeout = timeout;
    a.reply = reply;
    a.round = round_.number();
}

const std::vector<bool>& acquire_fsm::nodes(std::vector<bool> flags) {
    auto& set = node_sets_.next();
    set = std::move(flags);
    return set;
}

const std::vector<bool>& acquire_fsm::only_node(std::size_t node) {
    std::vector<bool> only(setup_.nodes, false);
    only[node] = true;
    return nodes(std::move(only));
}

}  // namespace redlock::detail
