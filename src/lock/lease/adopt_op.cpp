// SPDX-License-Identifier: BSL-1.0
// A lease handed from one process to another: written out as text (lease::handover), turned
// back into a lease by the other process (client::async_adopt). The adopter puts a token of its
// own in the first lease's place on every node (handover.lua), so that it is the only holder:
// whatever the first lease does afterwards matches nothing. Its validity comes from that call,
// confirmed by a quorum and counted from before it was sent, as an acquire's is.
#include "lock/lease/adopt_op.hpp"

#include "detail/completion.hpp"
#include "lock/acquire/quorum.hpp"
#include "lock/acquire/round_report.hpp"
#include "lock/client/cancel_on_slot.hpp"
#include "lock/client/suspension.hpp"
#include "lock/kinds/handover_record.hpp"
#include "lock/kinds/kind_choice.hpp"
#include "lock/lease/lease_grant.hpp"
#include <redlock/error.hpp>

#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>

#include <algorithm>

namespace redlock::detail {

namespace {

namespace asio = boost::asio;
using boost::system::error_code;
using clock = std::chrono::steady_clock;

class adopt_op final : public std::enable_shared_from_this<adopt_op>, public node_answers {
public:
    adopt_op(std::shared_ptr<client_state> client, handover_record record, lock_options options,
             std::shared_ptr<const lock_kind> kind, diagnostics* diag, adopt_handler h)
        : client_(std::move(client)),
          record_(std::move(record)),
          options_(std::move(options)),
          diag_(diag),
          handler_(std::move(h)),
          tally_(client_->node_count()),
          report_(client_->node_names(), "adopt", record_.resource),
          kind_(std::move(kind)) {}

    void connect_cancellation() { cancel_on_slot(handler_, shared_from_this(), client_->strand()); }
    void cancel() { finish(asio::error::operation_aborted, "cancelled"); }

    void start() {
        if (done_) return;
        try {
            token_ = client_->make_holder_token(options_.label);
        } catch (const std::exception& e) {
            finish(error::internal, e.what());
            return;
        }
        node_timeout_ = client_->node_timeout_for(options_.ttl, options_.node_timeout);
        node_call call;
        kind_->hand_over({record_.token, token_, record_.kind.owner.str(), kind_->owner(), options_.ttl},
                         call);
        suspended_at_start_ = suspended_so_far();
        t0_ = clock::now();
        sent_ = true;
        // With replicas, the WAIT right behind the hand-over's write, on its connection.
        call.wait_for_replicas(options_.replicas, options_.replica_timeout);
        replication_.assign(client_->node_count(), std::nullopt);
        wait_reply_ = call.wait_reply;
        client_->nodes().call_all(call, call.timeout(node_timeout_, options_.replica_timeout),
                                  shared_from_this(), {});
    }

    void on_node_answer(call_tag, std::size_t node, error_code ec,
                        std::span<const resp::value> replies) override {
        if (node < replication_.size())
            replication_[node] = judge_pinned_wait(wait_reply_, replies, options_.replicas,
                                                   options_.replica_timeout, "the adoption");
        on_reply(node, ec, replies.empty() ? resp::value{} : replies.front());
    }
    void on_replicas(call_tag, std::size_t node, replication_verdict r) override {
        count(node, r.ec ? vote::failed : vote::granted, r.ec, std::move(r.detail));
    }

private:
    void on_reply(std::size_t node, error_code ec, const resp::value& v) {
        if (done_ || tally_.decided()) return;
        vote verdict = vote::failed;
        if (!ec && v.kind == resp::type::integer && v.integer == -1) {
            ++reentered_;
            count(node, vote::denied, {}, "its owner holds it more than once there (re-entered)");
            return;
        }
        if (!ec && v.kind == resp::type::integer && (v.integer == 0 || v.integer == 1)) {
            verdict = v.integer == 1 ? vote::granted : vote::denied;
        } else if (!ec) {
            ec = v.is_error() ? error_code(error::server_error) : error_code(error::unexpected_reply);
        }
        if (verdict == vote::granted && options_.replicas > 0 && replication_[node]) {
            auto r = std::move(*replication_[node]);
            if (r.ec && r.ec != error::not_replicated) client_->metrics().node_failure(node, r.ec);
            count(node, r.ec ? vote::failed : vote::granted, r.ec, std::move(r.detail));
            return;
        }
        if (verdict == vote::granted && options_.replicas > 0) {
            // As an acquire's grant: the new token counts on a node once enough of its replicas
            // have it, or a failover to one that missed it would bring the first token back.
            // Here for a cluster's call split into steps, which comes back without its WAIT.
            client_->nodes().confirm_replicas(node, kind_->keys().lock, options_.replicas,
                                              options_.replica_timeout, node_timeout_, "the adoption",
                                              shared_from_this(), {});
            return;
        }
        count(node, verdict, ec, v.is_error() ? v.str : std::string());
    }

    void count(std::size_t node, vote verdict, error_code ec, std::string detail) {
        if (done_ || tally_.decided()) return;
        if (ec == error::not_replicated) replication_short_ = true;
        report_.record(node, verdict, ec, std::move(detail));
        switch (tally_.add(verdict)) {
            case round_state::won:
                won();
                return;
            case round_state::denied:
                finish(error::not_owner, reentered_ > 0
                                             ? "its owner re-entered it (held it more than once) on " +
                                                   std::to_string(reentered_) +
                                                   " nodes: a re-entered lease is not handed over; release "
                                                   "the inner holds first"
                                             : "a majority of nodes no longer hold the lease's token");
                return;
            case round_state::unreachable:
                finish(replication_short_ ? error_code(error::not_replicated) : report_.unreachable_cause(),
                       "too many nodes failed");
                return;
            case round_state::pending:
                return;
        }
    }

    void won() {
        if (client_->work().closing.load(std::memory_order_relaxed)) {
            // The close has taken its list of leases: this one would be nobody's to release.
            finish(error::client_closed, "the client closed meanwhile; the lease stays until its ttl");
            return;
        }
        const auto now = clock::now();
        const auto left = validity_left(options_.ttl, now - t0_, client_->config().drift_factor);
        if (left <= options_.min_validity) {
            finish(error::validity_expired, "a quorum confirmed after the validity ran out");
            return;
        }
        won_lock w;
        w.resource = record_.resource;
        w.kind = kind_;
        w.token = token_;
        w.fence = record_.fence;
        w.fences = record_.fences;
        w.node_timeout = node_timeout_;
        w.valid_until = now + left;
        w.suspended_at_start = suspended_at_start_;
        w.nodes_granted = tally_.granted();
        finish({}, "adopted", lease(grant_lease(client_, std::move(w), options_, now)));
    }

    void finish(error_code ec, std::string_view outcome, lease l = lease()) {
        if (done_) return;
        done_ = true;
        if (ec && sent_) give_back();
        if (diag_) {
            diag_->message = report_.summary(tally_, outcome);
            diag_->nodes = report_.outcomes();
            diag_->attempts = 1;
        }
        if (!ec && client_->events().wanted()) {
            client_->events().emit(
                resource_event(event_kind::acquired, record_.resource, {}, "adopted from another process"));
        }
        complete_on_handler_executor(std::move(handler_), client_->executor(), ec, std::move(l));
    }

    // A failed adoption gives the hold back to the first lease's token on every node, as a
    // failed acquire releases on all: where our hand-over landed (or lands late), the first
    // lease holds again, and no node keeps a token nobody holds.
    void give_back() {
        try {
            node_call call;
            kind_->hand_over({token_, record_.token, kind_->owner(), record_.kind.owner.str(), options_.ttl},
                             call);
            client_->nodes().call_all(call, client_->background_timeout(), nullptr, {});
        } catch (...) {
            // Out of memory: where the hand-over landed, our token expires with its ttl.
        }
    }

    std::shared_ptr<client_state> client_;
    handover_record record_;
    lock_options options_;
    diagnostics* diag_;
    adopt_handler handler_;
    vote_tally tally_;
    round_report report_;
    std::shared_ptr<const lock_kind> kind_;
    std::chrono::milliseconds node_timeout_{0};
    clock::time_point t0_;
    std::chrono::nanoseconds suspended_at_start_{0};
    std::string token_;  // the adopter's: the first lease's token holds nothing once adopted
    bool sent_ = false;
    std::vector<std::optional<replication_verdict>> replication_;  // per node: its pinned WAIT's verdict
    std::size_t wait_reply_ = 0;                                   // where the replies have the WAIT's
    bool replication_short_ = false;  // a node failed for want of replicas: say so, as an acquire does
    std::size_t reentered_ = 0;       // nodes where the first owner holds it more than once
    bool done_ = false;
};

void refuse(const client_state& client, diagnostics* diag, adopt_handler handler, error_code ec,
            std::string why) {
    if (diag) diag->message = "adopt: " + std::move(why);
    asio::post(client.executor(), [h = std::move(handler), ex = client.executor(), ec]() mutable {
        complete_on_handler_executor(std::move(h), ex, ec, lease());
    });
}

}  // namespace

void start_adopt(std::shared_ptr<client_state> client, std::string text, lock_options options,
                 diagnostics* diag, adopt_handler handler) {
    handover_record record;
    std::string why;
    if (client->work().closing.load(std::memory_order_relaxed)) {
        refuse(*client, diag, std::move(handler), error::client_closed, "the client is closed");
        return;
    }
    if (!parse_handover(text, record, why)) {
        refuse(*client, diag, std::move(handler), error::invalid_config, std::move(why));
        return;
    }
    try {
        take_kind_of(record, options);
    } catch (const std::exception& e) {
        refuse(*client, diag, std::move(handler), error::internal, e.what());
        return;
    }
    std::shared_ptr<const lock_kind> kind;
    if (auto ec =
            choose_lock_kind(*client, record.resource, record.resources, options, record.place, kind, why)) {
        refuse(*client, diag, std::move(handler), ec, std::move(why));
        return;
    }
    auto op = std::make_shared<adopt_op>(client, std::move(record), std::move(options), std::move(kind), diag,
                                         std::move(handler));
    op->connect_cancellation();
    asio::post(client->strand(), [op] { op->start(); });
}

}  // namespace redlock::detail
