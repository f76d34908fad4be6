// SPDX-License-Identifier: BSL-1.0
// The rounds of an acquisition: sending what the lock's kind builds, feeding the answers to
// acquire_round and executing its steps, and handing a won round to its lease (lease_grant).
// The waits between rounds are in acquire_waiting.cpp; the class is in acquire_op.hpp.
#include "lock/acquire/acquire_op.hpp"

#include "detail/completion.hpp"
#include "lock/acquire/acquire_round.hpp"
#include "lock/acquire/round_report.hpp"
#include "lock/acquire/wait_policy.hpp"
#include "lock/client/cancel_on_slot.hpp"
#include "lock/client/suspension.hpp"
#include "lock/kinds/kind_choice.hpp"
#include "lock/kinds/lock_kind.hpp"
#include "lock/lease/lease_grant.hpp"
#include <redlock/error.hpp>

#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>

#include <algorithm>
#include <exception>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace redlock::detail {

namespace {

namespace asio = boost::asio;
using boost::system::error_code;
using clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

}  // namespace

void acquire_op::start() {
    if (done_) return;  // cancelled before it started
    if (client_->work().closing.load(std::memory_order_relaxed)) {
        finish(error::client_closed, lease(), "acquire \"" + resource_ + "\": the client is closed");
        return;
    }
    client_->work().add(shared_from_this());
    std::string why;
    if (auto ec = choose_lock_kind(*client_, resource_, resources_, options_, {}, kind_, why)) {
        finish(ec, lease(), why);
        return;
    }
    waits_ = options_.wait > milliseconds::zero();
    policy_.emplace(waits_ && options_.waiting == wait_strategy::notify, kind_->queues(),
                    client_->node_count(), options_.retry ? *options_.retry : client_->config().retry,
                    options_.queue_timeout);
    node_timeout_ = client_->node_timeout_for(options_.ttl, options_.node_timeout);
    if (kind_->queues()) wake_channel_ = kind_->wake_channel();
    started_ = clock::now();
    deadline_ = started_ + options_.wait;
    // Only a queued waiter is ever woken on this channel: subscribed before the round
    // that queues us, it misses no wake-up.
    if (kind_->queues() && policy_->notifies()) listen_on(wake_channel_);
    start_round();
}

void acquire_op::cancel() {
    if (done_) return;
    // Mid-attempt, any node may still grant: release wherever that can happen. A round that
    // won but still settles its fence holds the lock on a quorum. A fair waiter also holds
    // a place in the queue between attempts, and a waiting writer its mark.
    if (round_.may_hold() || (round_.number() > 0 && waits_between_rounds())) leave();
    sleep_.end_now();
    finish(
        asio::error::operation_aborted, lease(),
        "acquire \"" + resource_ + "\": cancelled after " + std::to_string(round_.number()) + " attempt(s)");
}

bool acquire_op::new_token(std::string& out) {
    try {
        out = client_->make_holder_token(options_.label);
        return true;
    } catch (const std::exception& e) {
        finish(error::internal, lease(), e.what());
        return false;
    }
}

void acquire_op::start_round() {
    std::string token = kind_->round_value(round_.number() + 1);
    if (token.empty() && !new_token(token)) return;
    // t0 before the first send, so time the commands spend queued counts against the validity.
    round_suspended_ = suspended_so_far();
    round_.begin(std::move(token), clock::now());
    policy_->round_started();
    report_.reset();
    client_->metrics().attempts.fetch_add(1, std::memory_order_relaxed);
    const round_request request{round_.token(), round_.previous_token(), policy_->notifies(),
                                waits_,         round_.ticket(),         round_.tally().quorum() == 1};
    if (kind_->queues()) policy_->queued_this_round(waits_ && (request.ticket != 0 || request.single_node));
    call_.clear();
    kind_->acquire(request, call_);
    call_.wait_for_replicas(options_.replicas, options_.replica_timeout);
    call_.ask_replication_id(client_->asks_replication_id());
    // A pipelined WAIT holds the node for up to replica_timeout.
    const auto timeout = call_.timeout(node_timeout_, options_.replica_timeout);
    for (std::size_t i = 0; i < client_->node_count(); ++i) {
        // A call run in steps judges each step's master itself (slot_step_run.cpp).
        const auto id_reply = client_->runs_steps(i, call_) ? 0 : call_.replication_id_reply;
        client_->call_on(i, call_, timeout,
                         [self = shared_from_this(), r = round_.number(), i, id_reply](
                             error_code ec, std::span<const resp::value> replies) {
                             if (r != self->round_.number()) return;
                             auto answer = self->kind_->read_acquire(self->call_, ec, replies);
                             if (answer.verdict == vote::granted && !answer.replication) {
                                 answer.replication = judge_pinned_wait(self->call_.wait_reply, replies,
                                                                        self->options_.replicas,
                                                                        self->options_.replica_timeout, "");
                             }
                             self->client_->judge_answer(i, answer, id_reply, replies);
                             self->on_answer(i, std::move(answer));
                         });
    }
}

bool acquire_op::counting(unsigned round) const {
    return !done_ && round == round_.number() && round_.counting();
}

void acquire_op::on_answer(std::size_t node, acquire_answer a) {
    const bool granted = a.verdict == vote::granted;
    // A node that granted after the fence was settled is written back too; the grant no
    // longer waits for it.
    if (granted && a.fence && !round_.counting() && round_.late_grant_behind(a.all_fences()))
        write_back(node);
    if (done_) {
        // A straggler of the round that won: if it did not grant, it may still queue us.
        if (round_.has_succeeded() && leaves_refusers(round_) && !granted) dequeue(only_node(node));
        return;
    }
    if (kind_->queues()) {
        round_.answered(node, granted);
        // Even after the round is decided: a straggler's ticket may still complete the quorum.
        if (a.place) note_place(*a.place);
    }
    if (!round_.counting()) {
        if (granted) late_split();
        return;
    }
    if (!kind_->queues()) round_.answered(node, granted);  // a fair round recorded it above
    if (a.verdict == vote::failed) {
        if (a.node_fault) client_->metrics().node_failure(node, a.ec);
        count(node, vote::failed, a.ec, std::move(a.detail));
    } else if (granted) {
        round_.granted(node, a.all_fences(), a.numbered);
        if (auto& r = a.replication) {
            if (r->ec == error::unexpected_reply) client_->metrics().node_failure(node, r->ec);
            count(node, r->ec ? vote::failed : vote::granted, r->ec, std::move(r->detail));
        } else {
            count_grant(node);
        }
    } else if (!a.held_by.empty() && round_.is_earlier_token(a.held_by)) {
        held_by_earlier_round(node, a.held_by);
    } else {
        round_.contended();
        if (a.holder_pttl) policy_->holder_pttl(*a.holder_pttl);
        blocked_by_ = a.blocked_by;
        count(node, vote::denied, {}, {});
    }
}

void acquire_op::note_place(queue_place place) {
    if (place.rank == 0) policy_->at_queue_head();
    // The round was decided before the ticket was known (see wait_policy::fair_wait): queue now.
    if (round_.note_ticket(place.ticket, waits_)) sleep_.end_by(clock::now(), next_round_after_sleep());
}

void acquire_op::held_by_earlier_round(std::size_t node, const std::string& earlier) {
    node_call call;
    if (left_) {
        // The final round's straggler, after our release went out: a takeover now would write
        // a full ttl that nobody releases. Free the earlier round's key.
        kind_->release(earlier, false, call);
        client_->send_call(call, only_node(node), client_->background_timeout(), {});
        count(node, vote::failed, error::reply_lost, "held by an earlier round of ours, released");
        return;
    }
    if (!kind_->take_over(earlier, round_.token(), call)) {
        count(node, vote::denied, {}, {});
        return;
    }
    call.wait_for_replicas(options_.replicas, options_.replica_timeout);
    call.ask_replication_id(client_->asks_replication_id());
    client_->call_on(
        node, call, call.timeout(node_timeout_, options_.replica_timeout),
        [self = shared_from_this(), r = round_.number(), node, wait_reply = call.wait_reply,
         id_reply = call.replication_id_reply](error_code ec, std::span<const resp::value> replies) {
            if (!self->counting(r)) return;
            if (ec) {
                self->count(node, vote::failed, ec, replies.empty() ? "" : replies.front().str);
            } else if (replies.front().kind == resp::type::integer && replies.front().integer == 1) {
                error_code refused;
                if (auto why = self->client_->why_answer_does_not_count(node, id_reply, replies, refused);
                    !why.empty()) {
                    self->count(node, vote::failed, refused, std::move(why));
                    return;
                }
                self->count_grant(node, judge_pinned_wait(wait_reply, replies, self->options_.replicas,
                                                          self->options_.replica_timeout, ""));
            } else {
                self->round_.contended();
                self->count(node, vote::denied, {}, {});
            }
        });
}

void acquire_op::count_grant(std::size_t node, std::optional<replication_verdict> pinned) {
    if (options_.replicas == 0) {
        count(node, vote::granted, {}, {});
        return;
    }
    if (pinned) {
        count(node, pinned->ec ? vote::failed : vote::granted, pinned->ec, std::move(pinned->detail));
        return;
    }
    client_->replicas().confirm(
        node, keys().lock, options_.replicas, options_.replica_timeout, node_timeout_, "",
        [self = shared_from_this(), r = round_.number(), node](replication_verdict v) {
            if (!self->counting(r)) return;
            self->count(node, v.ec ? vote::failed : vote::granted, v.ec, std::move(v.detail));
        });
}

void acquire_op::count(std::size_t node, vote v, error_code ec, std::string detail) {
    if (ec == error::not_replicated) replication_short_ = true;
    client_->admit(node, keys().lock, v, ec, detail);
    // On a cluster, several resources' grant counts only if the master of each one's slot votes.
    for (auto key : kind_->lock_keys())
        client_->admit(node, key, v, ec, detail);
    report_.record(node, v, ec, std::move(detail));
    if (ec == error::node_quarantined) {
        auto left = client_->quarantine_left(node, keys().lock);
        for (auto key : kind_->lock_keys())
            left = std::max(left, client_->quarantine_left(node, key));
        if (left > milliseconds::zero()) report_.quarantined_until(node, clock::now() + left);
    }
    std::uint64_t outer_fence = 0;  // the fence of this client's live hold that the round may enter
    if (kind_->reenters_fenced())
        outer_fence = client_->holds().live_fence(keys().lock, std::string(kind_->owner()), clock::now());
    run(round_.count(node, v, outer_fence));
}

void acquire_op::run(const step& s) {
    if (s.decided) {
        if (round_.was_contended()) {
            client_->metrics().contended.fetch_add(1, std::memory_order_relaxed);
            found_held_ = true;
        }
        policy_->round_decided(clock::now() - round_.started());
    }
    for (auto node : s.write_back)
        write_back(node);
    switch (s.what) {
        case step::action::grant:
            grant(clock::now());
            return;
        case step::action::fail:
            fail_round(s.cause);
            return;
        case step::action::give_up:
            finish_failed(s.cause);
            return;
        case step::action::none:
            return;
    }
}

void acquire_op::write_back(std::size_t node) {
    node_call call;
    kind_->write_back_fence(round_.token(), round_.fences(), call);
    // With replicas, the raised counter counts once they have it, as the grant did: a failover
    // to a replica that missed it would hand the next holder a smaller fence.
    call.wait_for_replicas(options_.replicas, options_.replica_timeout);
    client_->call_on(
        node, call, call.timeout(node_timeout_, options_.replica_timeout),
        [self = shared_from_this(), r = round_.number(), wait_reply = call.wait_reply](
            error_code ec, std::span<const resp::value> replies) {
            if (self->done_ || r != self->round_.number()) return;
            bool raised = !ec && replies.front().kind == resp::type::integer && replies.front().integer == 1;
            if (raised) {
                const auto replicated = judge_pinned_wait(wait_reply, replies, self->options_.replicas,
                                                          self->options_.replica_timeout, "");
                raised = !replicated || !replicated->ec;
            }
            self->run(self->round_.on_writeback(raised));
        });
}

void acquire_op::grant(clock::time_point now) {
    if (const auto left =
            round_.validity(now, options_.ttl, client_->config().drift_factor, options_.min_validity)) {
        succeed(now, now + *left, round_.tally().granted());
    } else {
        fail_round(error::validity_expired);
    }
}

void acquire_op::succeed(clock::time_point now, clock::time_point valid_until, std::size_t nodes_granted,
                         bool extend_now) {
    if (leaves_refusers(round_)) {
        // Nodes that refused may still queue (or mark) us: we no longer wait there. The nodes
        // yet to answer get it when they do (on_answer).
        const auto refused = round_.refused();
        if (std::find(refused.begin(), refused.end(), true) != refused.end()) dequeue(refused);
    }
    auto state =
        grant_lease(client_,
                    {resource_, kind_, round_.token(), round_.fence(),
                     resources_.empty() || !options_.fenced
                         ? std::vector<std::uint64_t>()
                         : std::vector<std::uint64_t>(round_.fences().begin(), round_.fences().end()),
                     node_timeout_, valid_until, nodes_granted, extend_now, round_suspended_},
                    options_, now);
    client_->metrics().acquired.fetch_add(1, std::memory_order_relaxed);
    client_->metrics().acquire_latency.record(now - started_);
    // The message costs more than the rest of a grant: build it only for a caller who asked.
    std::string message;
    if (diag_) message = report_.grant_summary(round_.tally(), handed_over_to_us_, valid_until - now);
    round_.succeeded();
    finish({}, lease(std::move(state)), std::move(message));
}

void acquire_op::dequeue(const std::vector<bool>& nodes) {
    node_call leave_queue;
    if (kind_->leave_queue(round_.token(), leave_queue))
        client_->send_call(leave_queue, nodes, client_->background_timeout(), {});
}

std::vector<bool> acquire_op::only_node(std::size_t node) const {
    std::vector<bool> only(client_->node_count(), false);
    only[node] = true;
    return only;
}

void acquire_op::leave() {
    left_ = true;
    node_call release;
    kind_->release(round_.token(), false, release);
    client_->send_call(
        release,
        waits_between_rounds() ? std::vector<bool>(client_->node_count(), true) : round_.nodes_to_release(),
        client_->background_timeout(), {});
}

void acquire_op::finish_failed(error_code cause, std::string_view why_now) {
    const auto ec =
        acquisition_error(cause, round_.tally(), report_.unreachable_cause(), waits_, replication_short_);
    finish(ec, lease(), report_.summary(round_.tally(), describe_acquisition_error(ec).append(why_now)));
}

void acquire_op::finish(error_code ec, lease l, std::string message) {
    if (done_) return;
    done_ = true;
    if (waiter_ != 0) client_->listener().remove(*waiter_channel_, waiter_);
    if (ec) client_->metrics().acquire_failed(ec);
    const auto took = clock::now() - started_;
    if (waits_ && found_held_) client_->metrics().wait_time.record(took);
    if (!ec && client_->events().wanted()) {
        client_->events().emit(resource_event(event_kind::acquired, resource_, {},
                                              handed_over_to_us_ ? "handed over by the release" : "",
                                              std::chrono::duration_cast<milliseconds>(took)));
    }
    if (diag_) {
        diag_->message = std::move(message) + subscription_refused_;
        diag_->nodes = report_.outcomes();
        diag_->attempts = round_.number();
    }
    complete_on_handler_executor(std::move(handler_), client_->executor(), ec, std::move(l));
}

void start_acquire(std::shared_ptr<client_state> client, std::string resource, lock_options options,
                   diagnostics* diag, acquire_handler handler) {
    auto strand = client->strand();
    auto op = std::make_shared<acquire_op>(std::move(client), std::move(resource), std::move(options), diag,
                                           std::move(handler));
    op->connect_cancellation();
    asio::post(strand, [op] { op->start(); });
}

void start_acquire_all(std::shared_ptr<client_state> client, std::vector<std::string> resources,
                       lock_options options, diagnostics* diag, acquire_handler handler) {
    // One order for every caller: the lease's names, its messages and the scripts' keys.
    std::sort(resources.begin(), resources.end());
    resources.erase(std::unique(resources.begin(), resources.end()), resources.end());
    if (resources.size() == 1) {
        start_acquire(std::move(client), std::move(resources.front()), std::move(options), diag,
                      std::move(handler));
        return;
    }
    std::string names;
    for (const auto& r : resources) {
        if (!names.empty()) names += ", ";
        names += r;
    }
    auto strand = client->strand();
    auto op = std::make_shared<acquire_op>(std::move(client), std::move(names), std::move(options), diag,
                                           std::move(handler), std::move(resources));
    op->connect_cancellation();
    asio::post(strand, [op] { op->start(); });
}

}  // namespace redlock::detail
