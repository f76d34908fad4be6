// SPDX-License-Identifier: BSL-1.0
#include "lock/lease/lease_rounds.hpp"

#include "detail/completion.hpp"
#include "lock/client/cancel_on_slot.hpp"
#include "lock/lease/lease_runner.hpp"
#include <redlock/error.hpp>

#include <boost/asio/error.hpp>

#include <string>

namespace redlock::detail {

namespace asio = boost::asio;
using boost::system::error_code;
using std::chrono::milliseconds;

lease_round::lease_round(std::shared_ptr<lease_state> state, const char* operation, diagnostics* diag,
                         lease_handler h)
    : state_(std::move(state)),
      client_(state_->client),
      diag_(diag),
      handler_(std::move(h)),
      tally_(client_->node_count()),
      report_(client_->node_names(), operation, state_->resource) {}

void lease_round::connect_cancellation() {
    if (handler_) cancel_on_slot(handler_, shared_from_this(), client_->strand());
}

void lease_round::cancel() {
    finish(asio::error::operation_aborted, "cancelled");
}

void lease_round::finish(error_code ec, std::string_view outcome) {
    if (done_) return;
    done_ = true;
    if (diag_) {
        diag_->message = report_.summary(tally_, outcome);
        diag_->nodes = report_.outcomes();
        diag_->attempts = 1;
    }
    if (handler_) complete_on_handler_executor(std::move(handler_), client_->executor(), ec);
}

void lease_round::on_reply(std::size_t node, error_code ec, const resp::value& v) {
    if (done_ || tally_.decided()) return;
    vote verdict = vote::failed;
    if (!ec) {
        if (const auto did = did_it(v); !did) {
            ec = error::unexpected_reply;
        } else if (*did) {
            on_done_by(node);
            return;
        } else {
            verdict = vote::denied;
        }
    }
    count(node, verdict, ec, v.is_error() ? v.str : std::string());
}

std::optional<bool> lease_round::did_it(const resp::value& v) const {
    if (v.kind != resp::type::integer || (v.integer != 0 && v.integer != 1)) return std::nullopt;
    return v.integer == 1;
}

void lease_round::count(std::size_t node, vote verdict, error_code ec, std::string detail) {
    if (done_ || tally_.decided()) return;
    report_.record(node, verdict, ec, std::move(detail));
    if (tally_.add(verdict) != round_state::pending) decided();
}

void lease_round::on_node_answer(call_tag, std::size_t node, error_code ec,
                                 std::span<const resp::value> replies) {
    on_reply(node, ec, replies.empty() ? resp::value{} : replies.front());
}

bool lease_round::finished_as_handed_over() {
    if (!state_->fsm.handover_written()) return false;
    finish(error::handed_over, "handed over: a majority of nodes hold the adopter's token");
    return true;
}

// --- extend ------------------------------------------------------------------------------------

extend_round::extend_round(std::shared_ptr<lease_state> state, std::uint64_t id, milliseconds ttl,
                           diagnostics* diag, lease_handler h)
    : lease_round(std::move(state), "extend", diag, std::move(h)), id_(id), ttl_(ttl) {}

void extend_round::start() {
    if (done_) return;
    state_->extends.push_back(std::static_pointer_cast<extend_round>(shared_from_this()));
    resume_lease(state_, lease_input::extend(id_, ttl_));
}

void extend_round::cancel() {
    if (done_) return;
    lease_round::cancel();
    // The machine forgets it; its entry in the registry goes once its replies have freed it.
    resume_lease(state_, lease_input::abandoned(id_));
}

void extend_round::send() {
    if (done_) return;
    if (state_->replicas > 0) {
        send_waited();
        return;
    }
    auto& nodes = client_->nodes();
    for (std::size_t i = 0; i < nodes.count(); ++i)
        nodes.extend(i, *state_->kind, state_->token, ttl_, state_->node_timeout, shared_from_this(), {});
}

// With lock_options::replicas: each node's extend with its WAIT behind it, never batched (a
// batch's WAIT would answer for every lease in it).
void extend_round::send_waited() {
    node_call call;
    state_->kind->extend(state_->token, ttl_, call);
    call.wait_for_replicas(state_->replicas, state_->replica_timeout);
    replication_.assign(client_->node_count(), std::nullopt);
    wait_reply_ = call.wait_reply;
    client_->nodes().call_all(call, call.timeout(state_->node_timeout, state_->replica_timeout),
                              shared_from_this(), {pinned_wait, 0});
}

void extend_round::on_node_answer(call_tag tag, std::size_t node, error_code ec,
                                  std::span<const resp::value> replies) {
    if (tag.what == pinned_wait && node < replication_.size())
        replication_[node] =
            judge_pinned_wait(wait_reply_, replies, state_->replicas, state_->replica_timeout, "the extend");
    lease_round::on_node_answer(tag, node, ec, replies);
}

void extend_round::on_replicas(call_tag, std::size_t node, replication_verdict verdict) {
    if (verdict.ec) {
        count(node, vote::failed, verdict.ec, std::move(verdict.detail));
    } else {
        count(node, vote::granted, {}, {});
    }
}

// With lock_options::replicas, an extend counts on a node once enough of its replicas have it: a
// failover to a replica that missed it would bring back the older expiry.
void extend_round::on_done_by(std::size_t node) {
    if (state_->replicas == 0) {
        count(node, vote::granted, {}, {});
        return;
    }
    if (node < replication_.size() && replication_[node]) {
        auto verdict = std::move(*replication_[node]);
        if (verdict.ec && verdict.ec != error::not_replicated)
            client_->metrics().node_failure(node, verdict.ec);
        count(node, verdict.ec ? vote::failed : vote::granted, verdict.ec, std::move(verdict.detail));
        return;
    }
    // A cluster's extend split into steps came back without its WAIT.
    client_->nodes().confirm_replicas(node, state_->kind->keys().lock, state_->replicas,
                                      state_->replica_timeout, state_->node_timeout, "the extend",
                                      shared_from_this(), {});
}

void extend_round::decided() {
    resume_lease(state_, lease_input::decided(id_, tally_.state(), static_cast<unsigned>(tally_.granted()),
                                              report_.unreachable_cause()));
}

// --- release -----------------------------------------------------------------------------------

void release_round::start() {
    // The holder let go: the machine ends the lease (no more renewals, waiters hear it was not
    // lost) and asks this round to send the release.
    state_->release = std::static_pointer_cast<release_round>(shared_from_this());
    resume_lease(state_, lease_input::ended_by(lease_event::release_called));
    if (state_->release.get() == this) {
        // The machine had ended the lease already (it cannot: the caller moved it out of held).
        // The release is token-checked, so sending it anyway is harmless; keeping it would not be.
        state_->release.reset();
        send();
    }
}

void release_round::send() {
    // Sent even when its caller cancelled: a lease given up is deleted wherever it still is.
    state_->send_release(state_->node_timeout, shared_from_this());
}

void release_round::decided() {
    switch (tally_.state()) {
        case round_state::won:
            client_->metrics().released.fetch_add(1, std::memory_order_relaxed);
            finish({}, "released");
            return;
        case round_state::denied:
            if (finished_as_handed_over()) return;
            client_->metrics().release_failed.fetch_add(1, std::memory_order_relaxed);
            finish(error::not_owner, "a majority of nodes no longer held our token");
            return;
        case round_state::unreachable:
            client_->metrics().release_failed.fetch_add(1, std::memory_order_relaxed);
            finish(report_.unreachable_cause(),
                   "too many nodes failed; our keys there expire with their ttl");
            return;
        case round_state::pending:
            return;
    }
}

// --- check -------------------------------------------------------------------------------------

void check_round::start() {
    if (done_) return;
    node_call call;
    state_->kind->check(state_->token, call);
    client_->nodes().call_all(call, state_->node_timeout, shared_from_this(), {});
}

// check.lua: the ms our hold has left there (-1: no expiry), 0: not ours there.
std::optional<bool> check_round::did_it(const resp::value& v) const {
    if (v.kind != resp::type::integer || v.integer < -1) return std::nullopt;
    return v.integer != 0;
}

void check_round::decided() {
    switch (tally_.state()) {
        case round_state::won:
            finish({}, "held on a quorum");
            return;
        case round_state::denied:
            if (finished_as_handed_over()) return;
            finish(error::not_owner, "a majority of nodes no longer hold our token");
            return;
        case round_state::unreachable:
            finish(report_.unreachable_cause(), "too many nodes failed to answer");
            return;
        case round_state::pending:
            return;
    }
}

}  // namespace redlock::detail
