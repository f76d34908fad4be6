// SPDX-License-Identifier: BSL-1.0
#include "lock/lease/lease_ops.hpp"

#include "detail/completion.hpp"
#include "lock/acquire/quorum.hpp"
#include "lock/acquire/round_report.hpp"
#include "lock/client/cancel_on_slot.hpp"
#include "lock/client/suspension.hpp"
#include "lock/lease/lease_end.hpp"
#include <redlock/error.hpp>

#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>

#include <optional>
#include <string>
#include <vector>

namespace redlock::detail {

namespace {

namespace asio = boost::asio;
using boost::system::error_code;
using clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

/// The part extend and release share: one round over all N nodes, decided by vote_tally,
/// completed once, cancellable at any point (the commands already sent still run).
class lease_round_op : public std::enable_shared_from_this<lease_round_op> {
public:
    lease_round_op(std::shared_ptr<lease_state> state, const char* operation, diagnostics* diag,
                   lease_handler h)
        : state_(std::move(state)),
          client_(state_->client),
          diag_(diag),
          handler_(std::move(h)),
          tally_(client_->node_count()),
          report_(client_->node_names(), operation, state_->resource) {}
    virtual ~lease_round_op() = default;

    // On the initiating thread, before start().
    void connect_cancellation() { cancel_on_slot(handler_, shared_from_this(), client_->strand()); }

    void cancel() { finish(asio::error::operation_aborted, "cancelled"); }

    virtual void start() = 0;

protected:
    // Called on the strand for each node's reply.
    void on_reply(std::size_t node, error_code ec, const resp::value& v) {
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

    // Whether a node's answer says it did it (1) or that the lease is not ours there (0);
    // nullopt for an answer the script never gives.
    [[nodiscard]] virtual std::optional<bool> did_it(const resp::value& v) const {
        if (v.kind != resp::type::integer || (v.integer != 0 && v.integer != 1)) return std::nullopt;
        return v.integer == 1;
    }

    // Node `node` did it (extended, released): its vote, unless the operation waits for more.
    virtual void on_done_by(std::size_t node) { count(node, vote::granted, {}, {}); }

    void count(std::size_t node, vote verdict, error_code ec, std::string detail) {
        if (done_ || tally_.decided()) return;
        report_.record(node, verdict, ec, std::move(detail));
        if (tally_.add(verdict) != round_state::pending) decided(clock::now());
    }

    virtual void decided(clock::time_point now) = 0;

    void finish(error_code ec, std::string_view outcome) {
        if (done_) return;
        done_ = true;
        if (diag_) {
            diag_->message = report_.summary(tally_, outcome);
            diag_->nodes = report_.outcomes();
            diag_->attempts = 1;
        }
        complete_on_handler_executor(std::move(handler_), client_->executor(), ec);
    }

    // Whether this lease wrote a hand-over (lease::handover): a majority without our token is
    // then the adoption, finished with finish_handed_over().
    [[nodiscard]] bool handed_over() const {
        return state_->handover_written.load(std::memory_order_acquire);
    }
    void finish_handed_over() {
        finish(error::handed_over, "handed over: a majority of nodes hold the adopter's token");
    }

    client_state::node_reply reply_handler() {
        return [self = shared_from_this()](std::size_t node, error_code ec, resp::value v) {
            self->on_reply(node, ec, v);
        };
    }

    std::vector<bool> all_nodes() const { return std::vector<bool>(client_->node_count(), true); }

    std::shared_ptr<lease_state> state_;
    std::shared_ptr<client_state> client_;
    diagnostics* diag_;
    lease_handler handler_;
    vote_tally tally_;
    round_report report_;
    bool done_ = false;
};

class extend_op final : public lease_round_op {
public:
    extend_op(std::shared_ptr<lease_state> state, milliseconds ttl, diagnostics* diag, lease_handler h)
        : lease_round_op(std::move(state), "extend", diag, std::move(h)), ttl_(ttl) {}

    void start() override {
        if (done_) return;
        suspended_at_start_ = suspended_so_far();
        t0_ = clock::now();
        old_valid_until_ = state_->valid_until_time();
        if (!state_->held()) {
            finish(error::not_owner, "the lease is no longer held");
            return;
        }
        if (t0_ >= old_valid_until_) {
            lose(lease_event::extend_too_late, error::lock_lost, "the validity had already run out");
            return;
        }
        if (state_->replicas > 0) {
            send_waited();
            return;
        }
        client_->send_extend(*state_->kind, state_->token, ttl_, all_nodes(), state_->node_timeout,
                             reply_handler());
    }

private:
    // With lock_options::replicas: each node's extend with its WAIT behind it, never batched
    // (a batch's WAIT would answer for every lease in it).
    void send_waited() {
        node_call call;
        state_->kind->extend(state_->token, ttl_, call);
        call.wait_for_replicas(state_->replicas, state_->replica_timeout);
        replication_.assign(client_->node_count(), std::nullopt);
        for (std::size_t i = 0; i < client_->node_count(); ++i) {
            client_->call_on(
                i, call, call.timeout(state_->node_timeout, state_->replica_timeout),
                [self = std::static_pointer_cast<extend_op>(shared_from_this()), i,
                 wait_reply = call.wait_reply](error_code ec, std::span<const resp::value> replies) {
                    self->replication_[i] = judge_pinned_wait(wait_reply, replies, self->state_->replicas,
                                                              self->state_->replica_timeout, "the extend");
                    self->on_reply(i, ec, replies.empty() ? resp::value{} : replies.front());
                });
        }
    }

    // With lock_options::replicas, an extend counts on a node once enough of its replicas have
    // it: a failover to a replica that missed it would bring back the older expiry.
    void on_done_by(std::size_t node) override {
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
        client_->replicas().confirm(node, state_->kind->keys().lock, state_->replicas,
                                    state_->replica_timeout, state_->node_timeout, "the extend",
                                    [self = std::static_pointer_cast<extend_op>(shared_from_this()),
                                     node](replication_verdict verdict) {
                                        if (verdict.ec) {
                                            self->count(node, vote::failed, verdict.ec,
                                                        std::move(verdict.detail));
                                        } else {
                                            self->count(node, vote::granted, {}, {});
                                        }
                                    });
    }

    void decided(clock::time_point now) override {
        switch (tally_.state()) {
            case round_state::won: {
                const auto left = validity_left(ttl_, now - t0_, client_->config().drift_factor);
                if (now < old_valid_until_ && left > clock::duration::zero() &&
                    state_->apply(lease_event::extend_confirmed).move_valid_until) {
                    state_->set_valid_until(now + left, suspended_at_start_);
                    state_->nodes_granted.store(static_cast<unsigned>(tally_.granted()));
                    client_->metrics().extended.fetch_add(1, std::memory_order_relaxed);
                    finish({}, "extended, validity left " +
                                   std::to_string(std::chrono::duration_cast<milliseconds>(left).count()) +
                                   " ms");
                } else {
                    lose(lease_event::extend_too_late, error::lock_lost,
                         "the quorum came after the validity ran out");
                }
                return;
            }
            case round_state::denied:
                if (handed_over()) {
                    give_up(state_, lease_event::adopted);
                    finish_handed_over();
                    return;
                }
                lose(lease_event::extend_denied, error::not_owner,
                     "a majority of nodes no longer hold our token");
                return;
            case round_state::unreachable:
                if (now >= old_valid_until_) {
                    lose(lease_event::extend_too_late, error::lock_lost,
                         "too many nodes failed before the validity ran out");
                } else {
                    // The lease keeps the validity it had: the caller may try again before it ends.
                    client_->metrics().extend_failed.fetch_add(1, std::memory_order_relaxed);
                    const auto* why = "too many nodes failed; the lease keeps its old validity";
                    if (client_->events().wanted()) {
                        client_->events().emit(resource_event(event_kind::extend_failed, state_->resource,
                                                              report_.unreachable_cause(), why));
                    }
                    finish(report_.unreachable_cause(), why);
                }
                return;
            case round_state::pending:
                return;
        }
    }

    // The lease is gone: clear it, and delete our token wherever it still is so that nobody
    // waits for a lease its owner has given up.
    void lose(lease_event event, error_code ec, std::string_view why) {
        client_->metrics().extend_failed.fetch_add(1, std::memory_order_relaxed);
        give_up(state_, event);
        finish(ec, why);
    }

    milliseconds ttl_;
    std::vector<std::optional<replication_verdict>> replication_;  // per node: its pinned WAIT's verdict
    std::chrono::nanoseconds suspended_at_start_{0};
    clock::time_point t0_;
    clock::time_point old_valid_until_;
};

class release_op final : public lease_round_op {
public:
    using lease_round_op::lease_round_op;

    void start() override {
        // The holder let go: no more renewals, waiters hear it was not lost.
        end_lease(*state_, {}, describe(lease_event::release_called));
        if (done_) return;
        state_->send_release(state_->node_timeout, reply_handler());
    }

private:
    void decided(clock::time_point) override {
        switch (tally_.state()) {
            case round_state::won:
                client_->metrics().released.fetch_add(1, std::memory_order_relaxed);
                finish({}, "released");
                return;
            case round_state::denied:
                if (handed_over()) return finish_handed_over();
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
};

class check_op final : public lease_round_op {
public:
    using lease_round_op::lease_round_op;

    void start() override {
        if (done_) return;
        node_call call;
        state_->kind->check(state_->token, call);
        client_->send_call(call, all_nodes(), state_->node_timeout, reply_handler());
    }

private:
    // check.lua: the ms our hold has left there (-1: no expiry), 0: not ours there.
    [[nodiscard]] std::optional<bool> did_it(const resp::value& v) const override {
        if (v.kind != resp::type::integer || v.integer < -1) return std::nullopt;
        return v.integer != 0;
    }

    void decided(clock::time_point) override {
        switch (tally_.state()) {
            case round_state::won:
                finish({}, "held on a quorum");
                return;
            case round_state::denied:
                if (handed_over()) return finish_handed_over();
                finish(error::not_owner, "a majority of nodes no longer hold our token");
                return;
            case round_state::unreachable:
                finish(report_.unreachable_cause(), "too many nodes failed to answer");
                return;
            case round_state::pending:
                return;
        }
    }
};

template <class Op>
void launch(std::shared_ptr<Op> op, const client_state& client) {
    op->connect_cancellation();
    asio::post(client.strand(), [op] { op->start(); });
}

}  // namespace

void start_extend(std::shared_ptr<lease_state> state, milliseconds ttl, diagnostics* diag,
                  lease_handler handler) {
    auto client = state->client;
    if (ttl <= milliseconds::zero() || ttl > client->config().max_ttl) {
        if (diag) {
            diag->clear();
            diag->message = "extend \"" + state->resource + "\": ttl " + std::to_string(ttl.count()) +
                            " ms is not in (0, " + std::to_string(client->config().max_ttl.count()) + "] ms";
        }
        complete_refused(client->executor(), std::move(handler), error::invalid_ttl);
        return;
    }
    launch(std::make_shared<extend_op>(std::move(state), ttl, diag, std::move(handler)), *client);
}

void start_release(std::shared_ptr<lease_state> state, diagnostics* diag, lease_handler handler) {
    auto client = state->client;
    launch(std::make_shared<release_op>(std::move(state), "release", diag, std::move(handler)), *client);
}

void start_check(std::shared_ptr<lease_state> state, diagnostics* diag, lease_handler handler) {
    auto client = state->client;
    launch(std::make_shared<check_op>(std::move(state), "check", diag, std::move(handler)), *client);
}

void complete_refused(const asio::any_io_executor& ex, lease_handler handler, error_code ec) {
    // Never complete inside the initiating function: post, then deliver on the handler's executor.
    asio::post(ex, [h = std::move(handler), ex, ec]() mutable {
        complete_on_handler_executor(std::move(h), ex, ec);
    });
}

}  // namespace redlock::detail
