// The rounds of an acquisition: sending what the lock's kind builds, feeding the answers to
// acquire_round and executing its steps, and handing a won round to its lease (lease_grant).
// The waits between rounds are in acquire_waiting.cpp; the class is in acquire_op_impl.hpp.
#include "detail/completion.hpp"
#include "lock/acquire_op_impl.hpp"
#include "lock/acquire_round.hpp"
#include "lock/cancel_on_slot.hpp"
#include "lock/kinds/lock_kind.hpp"
#include "lock/lease_grant.hpp"
#include "lock/lock_options_check.hpp"
#include "lock/round_report.hpp"
#include "lock/token.hpp"
#include "lock/wait_policy.hpp"
#include "scripts/scripts_gen.hpp"
#include <redlock/error.hpp>

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <algorithm>
#include <exception>
#include <optional>
#include <random>
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
    std::string why;
    if (auto ec = validate_lock_options(client_->config(), resource_, options_, why)) {
        finish(ec, lease(), why);
        return;
    }
    if (auto same = client_->same_server_nodes(); !same.empty()) {
        finish(error::invalid_config, lease(), "acquire \"" + resource_ + "\": " + same);
        return;
    }
    std::string place;  // a fair waiter's member in the queue, one for the whole acquisition
    if (options_.fair && !new_token(place)) return;
    kind_ = make_lock_kind(keys_for(client_->config().key_prefix, resource_), options_, std::move(place));
    waits_ = options_.wait > milliseconds::zero();
    policy_.emplace(waits_ && options_.waiting == wait_strategy::notify, options_.fair, client_->node_count(),
                    options_.retry ? *options_.retry : client_->config().retry, options_.queue_timeout);
    node_timeout_ = client_->node_timeout_for(options_.ttl, options_.node_timeout);
    if (options_.fenced) fence_key_ = fence_key_for(keys());
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
    // a place in the queue between attempts.
    if (round_.may_hold() || (round_.number() > 0 && kind_->queues() && waits_)) leave();
    retry_timer_.cancel();
    finish(
        asio::error::operation_aborted, lease(),
        "acquire \"" + resource_ + "\": cancelled after " + std::to_string(round_.number()) + " attempt(s)");
}

bool acquire_op::new_token(std::string& out) {
    try {
        out = make_token();
        return true;
    } catch (const std::exception& e) {
        finish(error::internal, lease(), e.what());
        return false;
    }
}

void acquire_op::start_round() {
    std::string token;
    if (!new_token(token)) return;
    // t0 before the first send, so time the commands spend queued counts against the validity.
    round_.begin(std::move(token), clock::now());
    policy_->round_started();
    report_.reset();
    client_->metrics().attempts.fetch_add(1, std::memory_order_relaxed);
    round_request request{round_.token(), round_.previous_token(), policy_->notifies(), waits_, {}};
    if (kind_->queues()) {
        // Without a ticket yet, a single node numbers us itself ("local"); N > 1 nodes each
        // hand out a number ("none"), and we take the largest of a quorum before we queue.
        ticket_text_ = round_.ticket() != 0           ? std::to_string(round_.ticket())
                       : round_.tally().quorum() == 1 ? std::string("local")
                                                      : std::string("none");
        request.ticket = ticket_text_;
        policy_->queued_this_round(waits_ && ticket_text_ != "none");
    }
    call_.clear();
    kind_->acquire(request, call_);
    send_round();
}

void acquire_op::send_round() {
    const auto r = round_.number();
    for (std::size_t i = 0; i < client_->node_count(); ++i) {
        if (call_.script) {
            client_->eval_on(i, *call_.script, call_.key_span(), call_.arg_span(), node_timeout_,
                             [self = shared_from_this(), r, i](error_code ec, resp::value v) {
                                 self->on_reply(r, i, ec, std::span<const resp::value>(&v, 1));
                             });
            continue;
        }
        // A pipelined WAIT holds the node for up to replica_timeout.
        const auto timeout = options_.replicas > 0 ? node_timeout_ + options_.replica_timeout : node_timeout_;
        client_->node(i).async_exec(
            call_.pipeline, timeout,
            asio::bind_executor(client_->strand(), [self = shared_from_this(), r, i](
                                                       error_code ec, std::vector<resp::value> replies) {
                if (ec) self->client_->metrics().node_failure(i, ec);
                self->on_reply(r, i, ec, replies);
            }));
    }
}

void acquire_op::on_reply(unsigned round, std::size_t node, error_code ec,
                          std::span<const resp::value> replies) {
    if (round != round_.number()) return;
    if (!ec && replies.size() != call_.replies()) {
        ec = error::unexpected_reply;
        client_->metrics().node_failure(node, ec);
    }
    on_answer(node, kind_->read_acquire(call_, ec, replies));
}

bool acquire_op::counting(unsigned round) const {
    return !done_ && round == round_.number() && round_.counting();
}

void acquire_op::on_answer(std::size_t node, acquire_answer a) {
    const bool granted = a.verdict == vote::granted;
    // A node that granted after the fence was settled is written back too; the grant no
    // longer waits for it.
    if (granted && a.fence && !round_.counting() && round_.late_grant_behind(*a.fence)) write_back(node);
    if (done_) {
        // A straggler of the round that won: if it did not grant, it may still queue us.
        if (round_.has_succeeded() && round_.ticket() != 0 && !granted) dequeue(only_node(node));
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
        round_.granted(node, a.fence, a.numbered);
        if (a.replica_acks) {
            count_replicated(node, *a.replica_acks);
        } else {
            count_grant(node);
        }
    } else if (!a.held_by.empty() && round_.is_earlier_token(a.held_by)) {
        held_by_earlier_round(node, a.held_by);
    } else {
        round_.contended();
        if (a.holder_pttl) policy_->holder_pttl(*a.holder_pttl);
        count(node, vote::denied, {}, {});
    }
}

void acquire_op::note_place(queue_place place) {
    if (place.rank == 0) policy_->at_queue_head();
    // The round was decided before the ticket was known (see wait_policy::fair_wait): queue now.
    if (round_.note_ticket(place.ticket, waits_) && sleeping_) retry_timer_.cancel();
}

void acquire_op::held_by_earlier_round(std::size_t node, const std::string& earlier) {
    if (!left_) {
        take_over(node, earlier);
        return;
    }
    // The final round's straggler, after our release went out: a takeover now would write
    // a full ttl that nobody releases. Free the earlier round's key.
    node_call release;
    kind_->release(earlier, false, release);
    client_->send_call(release, only_node(node), client_->background_timeout(), {});
    count(node, vote::failed, error::reply_lost, "held by an earlier round of ours, released");
}

void acquire_op::take_over(std::size_t node, const std::string& earlier) {
    const auto ttl_text = std::to_string(options_.ttl.count());
    std::string_view keys[] = {this->keys().lock};
    std::string_view args[] = {earlier, round_.token(), ttl_text};
    client_->eval_on(node, scripts::takeover, keys, args, node_timeout_,
                     [self = shared_from_this(), r = round_.number(), node](error_code ec, resp::value v) {
                         if (!self->counting(r)) return;
                         if (ec) {
                             self->count(node, vote::failed, ec, v.str);
                         } else if (v.kind == resp::type::integer && v.integer == 1) {
                             self->count_grant(node);
                         } else {
                             self->round_.contended();
                             self->count(node, vote::denied, {}, {});
                         }
                     });
}

void acquire_op::count_grant(std::size_t node) {
    if (options_.replicas == 0) {
        count(node, vote::granted, {}, {});
        return;
    }
    client_->replicas().wait(
        node, options_.replicas, options_.replica_timeout, node_timeout_,
        [self = shared_from_this(), r = round_.number(), node](error_code ec, const resp::value& acks) {
            if (ec) self->client_->metrics().node_failure(node, ec);
            if (!self->counting(r)) return;
            if (ec) {
                self->count(node, vote::failed, ec, {});
            } else {
                self->count_replicated(node, acks);
            }
        });
}

void acquire_op::count_replicated(std::size_t node, const resp::value& acks) {
    auto verdict = judge_replication(acks, options_.replicas, options_.replica_timeout, "");
    if (verdict.ec == error::unexpected_reply) client_->metrics().node_failure(node, verdict.ec);
    if (verdict.ec == error::not_replicated) replication_short_ = true;
    if (verdict.ec) {
        count(node, vote::failed, verdict.ec, std::move(verdict.detail));
    } else {
        count(node, vote::granted, {}, {});
    }
}

void acquire_op::count(std::size_t node, vote v, error_code ec, std::string detail) {
    // A node in restart quarantine may grant, but its grant does not count.
    if (v == vote::granted && !client_->votes(node)) {
        v = vote::failed;
        ec = error::node_quarantined;
        detail = client_->why_not_voting(node);
    }
    // A request that timed out waiting for a connection: the connection's own error (a
    // refused password, a certificate that did not verify) says why.
    if (v == vote::failed && ec == error::request_timeout && detail.empty()) {
        auto& connection = client_->node(node);
        if (!connection.is_connected()) {
            const auto last = connection.last_error();
            if (last.code) detail = "not connected: " + last.message;
        }
    }
    report_.record(node, v, ec, std::move(detail));
    run(round_.count(node, v, outer_fence()));
}

std::uint64_t acquire_op::outer_fence() const {
    if (!options_.fenced || !options_.reentrant) return 0;
    return client_->holds().live_fence(keys().lock, options_.owner.str(), clock::now());
}

void acquire_op::run(const step& s) {
    if (s.decided) {
        if (round_.was_contended()) client_->metrics().contended.fetch_add(1, std::memory_order_relaxed);
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
    const auto fence_text = std::to_string(round_.fence());
    std::string_view keys[] = {this->keys().lock, fence_key_};
    std::string_view args[] = {round_.token(), fence_text, kind_->owner()};
    const std::span<const std::string_view> used_args(args, kind_->owner().empty() ? 2 : 3);
    client_->eval_on(
        node, scripts::fence_writeback, keys, used_args, node_timeout_,
        [self = shared_from_this(), r = round_.number()](error_code ec, const resp::value& v) {
            if (self->done_ || r != self->round_.number()) return;
            self->run(self->round_.on_writeback(!ec && v.kind == resp::type::integer && v.integer == 1));
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
    if (kind_->queues() && round_.ticket() != 0) {
        // Nodes that refused may still queue us: we no longer wait there. The nodes yet to
        // answer get it when they do (on_answer).
        const auto refused = round_.refused();
        if (std::find(refused.begin(), refused.end(), true) != refused.end()) dequeue(refused);
    }
    auto state = grant_lease(client_,
                             {resource_, kind_, round_.token(), round_.fence(), node_timeout_, valid_until,
                              nodes_granted, extend_now},
                             options_, now);
    client_->metrics().acquired.fetch_add(1, std::memory_order_relaxed);
    client_->metrics().acquire_latency(now - started_);
    // The message costs more than the rest of a grant: build it only for a caller who asked.
    std::string message;
    if (diag_) {
        const auto left = std::chrono::duration_cast<milliseconds>(valid_until - now);
        const std::string how = handed_over_to_us_ ? "handed over by the release" : "acquired";
        message =
            report_.summary(round_.tally(), how + ", validity left " + std::to_string(left.count()) + " ms");
    }
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
    const bool queued = kind_->queues() && waits_;
    client_->send_call(release,
                       queued ? std::vector<bool>(client_->node_count(), true) : round_.nodes_to_release(),
                       client_->background_timeout(), {});
}

void acquire_op::finish_failed(error_code cause) {
    const auto& tally = round_.tally();
    if (cause == error::not_acquired && tally.failed() > tally.nodes() - tally.quorum()) {
        cause = error::quorum_unreachable;
    }
    if (cause == error::quorum_unreachable) cause = report_.unreachable_cause();
    if (cause == error::not_acquired && waits_) cause = error::wait_timeout;
    if (cause == error::quorum_unreachable && replication_short_) cause = error::not_replicated;
    finish(cause, lease(), report_.summary(tally, describe(cause)));
}

std::string acquire_op::describe(error_code ec) {
    if (ec == error::not_acquired) return "held by another owner";
    if (ec == error::wait_timeout) return "still held by another owner when the wait ran out";
    if (ec == error::quorum_unreachable) return "too many nodes failed or timed out";
    if (ec == error::server_error) return "too many nodes refused the command";
    if (ec == error::validity_expired) return "the quorum came after the validity ran out";
    if (ec == error::not_replicated) return "too few replicas acknowledged the grant";
    return ec.message();
}

void acquire_op::finish(error_code ec, lease l, std::string message) {
    if (done_) return;
    done_ = true;
    if (waiter_ != 0) client_->listener().remove(*waiter_channel_, waiter_);
    if (ec) client_->metrics().acquire_failed(ec);
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

}  // namespace redlock::detail
