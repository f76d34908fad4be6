#include "lock/acquire_op.hpp"

#include "detail/completion.hpp"
#include "lock/cancel_on_slot.hpp"
#include "lock/kinds/lock_kind.hpp"
#include "lock/lease_ops.hpp"
#include "lock/lease_state.hpp"
#include "lock/lock_options_check.hpp"
#include "lock/quorum.hpp"
#include "lock/resource_keys.hpp"
#include "lock/round_report.hpp"
#include "lock/token.hpp"
#include "lock/wait_policy.hpp"
#include "lock/watchdog.hpp"
#include "scripts/scripts_gen.hpp"
#include <redlock/error.hpp>
#include <redlock/resp/request.hpp>

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <functional>
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

// A fence as a script returned it (a counter, never negative).
std::uint64_t fence_from(std::int64_t fence) {
    return static_cast<std::uint64_t>(std::max<std::int64_t>(fence, 0));
}

class acquire_op : public std::enable_shared_from_this<acquire_op> {
public:
    acquire_op(std::shared_ptr<client_state> client, std::string resource, lock_options options,
               diagnostics* diag, acquire_handler handler)
        : client_(std::move(client)),
          resource_(std::move(resource)),
          options_(std::move(options)),
          diag_(diag),
          handler_(std::move(handler)),
          retry_timer_(client_->strand()),
          report_(*client_, "acquire", resource_) {}

    // On the initiating thread, before start().
    void connect_cancellation() { cancel_on_slot(handler_, shared_from_this(), client_->strand()); }

    void start() {
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
        if (options_.fair && !new_token(place_)) return;
        kind_ = make_lock_kind(keys_for(client_->config().key_prefix, resource_), options_, place_);
        node_timeout_ = client_->node_timeout_for(options_.ttl, options_.node_timeout);
        set_timeout_ = node_timeout_;
        if (options_.replicas > 0) set_timeout_ += options_.replica_timeout;
        policy_.emplace(options_.wait > milliseconds::zero() && options_.waiting == wait_strategy::notify,
                        options_.fair, client_->node_count(),
                        options_.retry ? *options_.retry : client_->config().retry, options_.queue_timeout);
        fair_ = kind_->queues();
        fenced_ = options_.fenced;
        if (fenced_) fence_key_ = fence_key_for(keys());
        if (fair_) wake_channel_ = kind_->wake_channel();
        started_ = clock::now();
        deadline_ = started_ + options_.wait;
        // Only a queued waiter is ever woken on this channel: subscribed before the round
        // that queues us, it misses no wake-up.
        if (fair_ && policy_->notifies()) listen_on(wake_channel_);
        start_round();
    }

    void cancel() {
        if (done_) return;
        // Mid-attempt, any node may still grant: release wherever that can happen. A round that
        // won but still settles its fence (writing back, or waiting for the holds) holds the
        // lock on a quorum. A fair waiter also holds a place in the queue between attempts.
        if (round_ > 0 && (!tally_.decided() || writing_back_ || awaiting_holds_ ||
                           (fair_ && options_.wait > milliseconds::zero()))) {
            leave();
        }
        retry_timer_.cancel();
        finish(asio::error::operation_aborted, lease(),
               "acquire \"" + resource_ + "\": cancelled after " + std::to_string(round_) + " attempt(s)");
    }

private:
    // Each round writes a token of its own. A round's cleanup may reach a node after the next
    // round's request does (sent on a connection given up for a new one, whose bytes were still
    // on their way): with one token for all rounds it would delete the later round's grant.
    bool new_token(std::string& out) {
        try {
            out = make_token();
            return true;
        } catch (const std::exception& e) {
            finish(error::internal, lease(), e.what());
            return false;
        }
    }

    void start_round() {
        const std::size_t n = client_->node_count();
        std::string token;
        if (!new_token(token)) return;
        if (!token_.empty()) remember_earlier(std::move(token_));
        token_ = std::move(token);
        ++round_;
        // A round counts as split once a late grant says so (late_split): only now is it known.
        tally_ = vote_tally(n);
        handed_over_.assign(n, false);
        awaiting_holds_ = false;
        policy_->round_started();
        report_.reset();
        contended_ = false;
        client_->metrics().attempts.fetch_add(1, std::memory_order_relaxed);
        // t0 before the first send, so time the commands spend queued counts against the validity.
        t0_ = clock::now();
        reset_node_answers();
        round_request request{
            token_, previous_token(), policy_->notifies(), options_.wait > milliseconds::zero(), {}};
        if (fair_) {
            round_heard_ = 0;
            round_ticket_max_ = 0;
            // Without a ticket yet, a single node numbers us itself ("local"); N > 1 nodes each
            // hand out a number ("none"), and we take the largest of a quorum before we queue.
            ticket_text_ = ticket_ != 0           ? std::to_string(ticket_)
                           : tally_.quorum() == 1 ? std::string("local")
                                                  : std::string("none");
            request.ticket = ticket_text_;
            policy_->queued_this_round(request.wait && ticket_text_ != "none");
        }
        call_.clear();
        kind_->acquire(request, call_);
        for (std::size_t i = 0; i < n; ++i) {
            if (call_.script) {
                client_->eval_on(i, *call_.script, call_.key_span(), call_.arg_span(), node_timeout_,
                                 [self = shared_from_this(), r = round_, i](error_code ec, resp::value v) {
                                     self->on_reply(r, i, ec, std::span<const resp::value>(&v, 1));
                                 });
                continue;
            }
            client_->node(i).async_exec(
                call_.pipeline, set_timeout_,
                asio::bind_executor(client_->strand(), [self = shared_from_this(), r = round_, i](
                                                           error_code ec, std::vector<resp::value> replies) {
                    if (ec) self->client_->metrics().node_failure(i, ec);
                    self->on_reply(r, i, ec, replies);
                }));
        }
    }

    [[nodiscard]] const resource_keys& keys() const { return kind_->keys(); }

    // The tokens of this acquisition's earlier rounds (the latest few): a lock still holding
    // one is ours to take over.
    void remember_earlier(std::string token) {
        constexpr std::size_t kept = 8;
        if (earlier_tokens_.size() == kept) earlier_tokens_.erase(earlier_tokens_.begin());
        earlier_tokens_.push_back(std::move(token));
    }

    [[nodiscard]] bool is_earlier_token(const std::string& token) const {
        return std::find(earlier_tokens_.begin(), earlier_tokens_.end(), token) != earlier_tokens_.end();
    }

    // The scripts' optional last argument: the previous round's token, if there was a round.
    [[nodiscard]] std::size_t with_previous(std::size_t args) const {
        return earlier_tokens_.empty() ? args : args + 1;
    }
    [[nodiscard]] std::string_view previous_token() const {
        return earlier_tokens_.empty() ? std::string_view() : std::string_view(earlier_tokens_.back());
    }

    void reset_node_answers() {
        answered_.assign(client_->node_count(), false);
        granted_.assign(client_->node_count(), false);
        if (fenced_) {
            fences_.assign(client_->node_count(), 0);
            numbered_.assign(client_->node_count(), true);
        }
    }

    // A node's answer to the current round, read by the lock's kind.
    void on_reply(unsigned round, std::size_t node, error_code ec, std::span<const resp::value> replies) {
        if (round != round_) return;
        if (!ec && replies.size() != call_.replies()) {
            ec = error::unexpected_reply;
            client_->metrics().node_failure(node, ec);
        }
        on_answer(node, kind_->read_acquire(call_, ec, replies));
    }

    void on_answer(std::size_t node, acquire_answer a) {
        const bool granted = a.verdict == vote::granted;
        if (granted && a.fence && !counting(round_)) late_grant(node, *a.fence);
        if (done_) {
            // A straggler of the round that won: if it did not grant, it may still queue us.
            if (succeeded_ && ticket_ != 0 && !granted) dequeue(only_node(node));
            return;
        }
        if (fair_) {
            answered_[node] = true;
            granted_[node] = granted;
            // Even after the round is decided: a straggler's ticket may still complete the quorum.
            if (a.place) note_place(a.place->ticket, a.place->rank);
        }
        if (!counting(round_)) {
            if (granted) late_split();
            return;
        }
        answered_[node] = true;
        if (a.verdict == vote::failed) {
            if (a.node_fault) client_->metrics().node_failure(node, a.ec);
            count(node, vote::failed, a.ec, std::move(a.detail));
        } else if (granted) {
            granted_[node] = true;
            if (a.fence) {
                fences_[node] = fence_from(*a.fence);
                numbered_[node] = a.numbered;
            }
            if (a.replica_acks) {
                count_replicated(node, *a.replica_acks);
            } else {
                count_grant(node);
            }
        } else if (!a.held_by.empty() && is_earlier_token(a.held_by)) {
            held_by_earlier_round(node, a.held_by);
        } else {
            contended_ = true;
            if (a.holder_pttl) policy_->holder_pttl(*a.holder_pttl);
            count(node, vote::denied, {}, {});
        }
    }

    // The key holds the token of an earlier round of ours.
    void held_by_earlier_round(std::size_t node, const std::string& earlier) {
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

    // The fence is the largest of the granting quorum's. Nodes whose counter is below it are
    // raised to it (fence_writeback.lua, only where our token still holds the lock) until a
    // quorum has it: any later grant's quorum shares a node with that one, so its fence is
    // larger. Where a quorum already returned the largest, the lease does not wait (N = 1).
    //
    // A reentrant re-entry keeps the fence of the hold it enters: where a quorum of nodes report
    // a hold already numbered, the fence is the largest of theirs (the outer grant wrote it to a
    // quorum, which shares a node with ours), and nodes that numbered a new hold get it too.
    // Fewer than a quorum is no hold to enter: what they keep may be the leftover of a release
    // that missed them, and another owner may have held the lock since, with a larger fence.
    void settle_fence() {
        // A re-entry while this client holds the outer hold takes its fence, whatever the
        // nodes that answered show (some of the hold's quorum may be out of reach).
        const std::uint64_t outer = outer_fence();
        const bool reentered = outer != 0 || entered_existing_hold();
        fence_ = outer;
        for (std::size_t i = 0; i < granted_.size() && outer == 0; ++i)
            if (granted_[i] && (!reentered || !numbered_[i])) fence_ = std::max(fence_, fences_[i]);
        fence_confirmed_ = 0;
        std::vector<std::size_t> behind;
        for (std::size_t i = 0; i < granted_.size(); ++i) {
            if (!granted_[i]) continue;
            if (fences_[i] == fence_) {
                ++fence_confirmed_;
            } else {
                behind.push_back(i);
            }
        }
        // Nodes behind are written back even when a quorum already has the fence: their
        // counters then order later grants sooner, and a reentrant hold's next re-entry there
        // reports this fence.
        writing_back_ = fence_confirmed_ < tally_.quorum();
        fence_pending_ = behind.size();
        for (auto i : behind) {
            write_back(i, [self = shared_from_this(), r = round_](error_code ec, const resp::value& v) {
                self->on_writeback(r, ec, v);
            });
        }
        if (!writing_back_) grant(clock::now());
    }

    // fence_writeback.lua on `node`, for our acquisition.
    void write_back(std::size_t node, std::function<void(error_code, resp::value)> on_reply) {
        const auto fence_text = std::to_string(fence_);
        std::string_view keys[] = {this->keys().lock, fence_key_};
        std::string_view args[] = {token_, fence_text, kind_->owner()};
        const std::span<const std::string_view> used_args(args, kind_->owner().empty() ? 2 : 3);
        client_->eval_on(node, scripts::fence_writeback, keys, used_args, node_timeout_, std::move(on_reply));
    }

    // A node that granted after the fence was settled is written back too (see settle_fence);
    // the grant no longer waits for it.
    void late_grant(std::size_t node, std::int64_t node_fence) {
        if (!fenced_ || !(succeeded_ || writing_back_)) return;
        if (node_fence >= 0 && static_cast<std::uint64_t>(node_fence) == fence_) return;
        write_back(node, {});
    }

    // The hashes of a hold that still exists on a quorum have existed since its grant (a hash
    // that is gone comes back only numbered anew), so nobody else held the lock meanwhile.
    [[nodiscard]] bool entered_existing_hold() const { return existing_holds() >= tally_.quorum(); }

    // The fence of this client's live hold of our owner on the resource; 0 if none.
    [[nodiscard]] std::uint64_t outer_fence() const {
        const auto& owner = options_.owner.str();
        return owner.empty() ? 0 : client_->holds().live_fence(keys().lock, owner, clock::now());
    }

    [[nodiscard]] std::size_t existing_holds() const {
        std::size_t n = 0;
        for (std::size_t i = 0; i < granted_.size(); ++i)
            if (granted_[i] && !numbered_[i]) n += 1;
        return n;
    }

    // A won round in which some nodes, but not yet a quorum, report our existing hold: whether
    // it is a re-entry depends on the nodes still to answer (at most a node timeout).
    [[nodiscard]] bool hold_undecided() const {
        const auto existing = existing_holds();
        return existing > 0 && existing < tally_.quorum() && !tally_.all_answered();
    }

    void on_writeback(unsigned round, error_code ec, const resp::value& v) {
        if (done_ || round != round_ || !writing_back_) return;
        --fence_pending_;
        if (!ec && v.kind == resp::type::integer && v.integer == 1) ++fence_confirmed_;
        if (fence_confirmed_ >= tally_.quorum()) {
            writing_back_ = false;
            grant(clock::now());
        } else if (fence_pending_ == 0) {
            writing_back_ = false;
            fail_round(error::quorum_unreachable);
        }
    }

    // Once a quorum of nodes has answered, the largest ticket among them is ours for good: a
    // waiter queued before we asked is queued on a quorum too, which shares a node with ours,
    // and that node numbered us above it.
    void note_place(std::int64_t ticket, std::int64_t rank) {
        ++round_heard_;
        if (rank == 0) policy_->at_queue_head();
        if (ticket > 0) round_ticket_max_ = std::max(round_ticket_max_, static_cast<std::uint64_t>(ticket));
        if (ticket_ == 0 && options_.wait > milliseconds::zero() && round_heard_ >= tally_.quorum()) {
            ticket_ = round_ticket_max_;
            // The round was decided before it (see wait_policy::fair_wait): queue now.
            if (sleeping_) retry_timer_.cancel();
        }
    }

    // A granting node's vote; with lock_options::replicas, once WAIT says enough replicas have
    // the grant (a second round trip: WAIT cannot run inside the script).
    void count_grant(std::size_t node) {
        if (options_.replicas == 0) {
            count(node, vote::granted, {}, {});
            return;
        }
        client_->replicas().wait(
            node, options_.replicas, options_.replica_timeout, node_timeout_,
            [self = shared_from_this(), r = round_, node](error_code ec, const resp::value& acks) {
                if (ec) self->client_->metrics().node_failure(node, ec);
                if (!self->counting(r)) return;
                if (ec) {
                    self->count(node, vote::failed, ec, {});
                } else {
                    self->count_replicated(node, acks);
                }
            });
    }

    // The reply to WAIT after node `node` granted.
    void count_replicated(std::size_t node, const resp::value& acks) {
        auto verdict = judge_replication(acks, options_.replicas, options_.replica_timeout, "");
        if (verdict.ec == error::unexpected_reply) client_->metrics().node_failure(node, verdict.ec);
        if (verdict.ec == error::not_replicated) replication_short_ = true;
        if (verdict.ec) {
            count(node, vote::failed, verdict.ec, std::move(verdict.detail));
        } else {
            count(node, vote::granted, {}, {});
        }
    }

    // Replies of the current round count until it is decided, and after that while the final
    // round waits for its stragglers to name the right cause.
    [[nodiscard]] bool counting(unsigned round) const {
        return !done_ && round == round_ && (!tally_.decided() || awaiting_stragglers_ || awaiting_holds_);
    }

    // Woken by a release message (or told to try again): try now rather than at the end of
    // the wait, or soon (see wait_policy::after_release).
    void on_released() {
        if (done_) return;
        if (!sleeping_) {
            // The release came while our try was on its way: if the try fails, it may have
            // been refused before the release; try once more at once.
            policy_->woken_during_round();
            return;
        }
        const auto wake = policy_->after_release();
        if (wake.at_once) {
            // From here: a hop through the timer's completion would add a turn of the event loop.
            ++wait_generation_;  // the pending timer handler is now stale
            retry_timer_.cancel();
            sleeping_ = false;
            maybe_next_round();
            return;
        }
        std::uniform_int_distribution<clock::rep> pick(0, wake.within.count());
        wake_by(clock::now() + clock::duration(pick(client_->rng())));
    }

    // Our channel's subscription is in place on every node now. If we sleep, our last round
    // may have run on a node before the SUBSCRIBE (they go on two connections), and a release
    // in between was not heard: try once more. While a round is on its way, no: a node writes
    // its replies in the order it runs the commands, so that round most likely ran after it.
    void on_subscribed() {
        if (done_ || !sleeping_) return;
        on_released();
    }

    // fair.lua handed the lock over to our place on `node`: a release found us at the head of
    // its queue, with the hand-off that our round `round_token` registered when it was refused
    // there. The lock is ours without a round trip once a quorum has handed it over, while we
    // wait after that very round (whose start bounds when the hand-off was registered) with
    // its cleanups done. Any other hand-off wakes us: the next round takes it over.
    void on_handoff(std::size_t node, std::string_view round_token) {
        if (done_) return;
        // With lock_options::replicas a hand-off is taken by the next round, whose grant waits
        // for the replicas: a WAIT of ours would not cover the releaser's write.
        if (!sleeping_ || cleanups_pending_ > 0 || round_token != token_ || node >= handed_over_.size() ||
            options_.replicas > 0) {
            on_released();
            return;
        }
        if (handed_over_[node] || !client_->votes(node)) return;
        handed_over_[node] = true;
        const auto count =
            static_cast<std::size_t>(std::count(handed_over_.begin(), handed_over_.end(), true));
        const auto now = clock::now();
        const auto verdict = judge_handoff(count, tally_.quorum(), options_.ttl, options_.queue_timeout,
                                           now - t0_, client_->config().drift_factor, options_.min_validity);
        if (verdict.what == handoff_verdict::action::wait_for_more) {
            // The other nodes' releases come within about a round of ours; if they do not (a
            // message lost, another head there), the next round takes over what we have.
            wake_by(now + policy_->split_spread());
            return;
        }
        if (verdict.what == handoff_verdict::action::try_round) {
            on_released();  // a round takes it over with the full ttl
            return;
        }
        ++wait_generation_;  // the pending timer handler is now stale
        retry_timer_.cancel();
        sleeping_ = false;
        handed_over_to_us_ = true;
        token_ = place_ + ':' + token_;  // the value fair.lua gave the lock: our place and this round
        granted_ = handed_over_;
        // The nodes that did not hand over still queue us: succeed() takes us out there.
        answered_.assign(handed_over_.size(), true);
        succeed(now, now + verdict.left, count, verdict.extend_now);
    }

    // Ends the current wait at `at` if that is sooner than it would end.
    void wake_by(clock::time_point at) {
        if (at >= retry_timer_.expiry()) return;
        retry_timer_.expires_at(at);  // cancels the current wait: its handler is now stale
        wait_for_retry_timer();
    }

    // Each wait has a generation: a handler of an earlier wait (cancelled by a re-arm) does nothing.
    void wait_for_retry_timer() {
        retry_timer_.async_wait(asio::bind_executor(
            client_->strand(), [self = shared_from_this(), gen = ++wait_generation_](error_code) {
                if (gen != self->wait_generation_) return;
                self->sleeping_ = false;
                self->maybe_next_round();
            }));
    }

    // The key holds the token of an earlier round of ours whose reply was lost and whose
    // cleanup has not arrived: takeover.lua puts this round's token in its place, with the full
    // ttl from now, so that the late cleanup deletes nothing.
    void take_over(std::size_t node, const std::string& earlier) {
        const auto ttl_text = std::to_string(options_.ttl.count());
        std::string_view keys[] = {this->keys().lock};
        std::string_view args[] = {earlier, token_, ttl_text};
        client_->eval_on(node, scripts::takeover, keys, args, node_timeout_,
                         [self = shared_from_this(), r = round_, node](error_code ec, resp::value v) {
                             if (!self->counting(r)) return;
                             if (ec) {
                                 self->count(node, vote::failed, ec, v.str);
                             } else if (v.kind == resp::type::integer && v.integer == 1) {
                                 self->count_grant(node);
                             } else {
                                 self->contended_ = true;
                                 self->count(node, vote::denied, {}, {});
                             }
                         });
    }

    void count(std::size_t node, vote v, error_code ec, std::string detail) {
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
        // A grant that did not count (quarantine, too few replicas) takes no part in the fence.
        if (v != vote::granted && node < granted_.size()) granted_[node] = false;
        report_.record(node, v, ec, std::move(detail));
        const bool was_decided = tally_.decided();
        tally_.add(v);
        if (!was_decided) {
            if (tally_.decided()) decide();
        } else if (awaiting_stragglers_ && tally_.all_answered()) {
            finish_failed(final_cause_);
        } else if (awaiting_holds_ && !hold_undecided()) {
            awaiting_holds_ = false;
            settle_fence();
        }
    }

    void decide() {
        if (contended_) client_->metrics().contended.fetch_add(1, std::memory_order_relaxed);
        const auto now = clock::now();
        policy_->round_decided(now - t0_);
        switch (tally_.state()) {
            case round_state::won:
                if (fenced_ && hold_undecided() && outer_fence() == 0) {
                    awaiting_holds_ = true;  // count() settles once the rest have answered
                } else if (fenced_) {
                    settle_fence();
                } else {
                    grant(now);
                }
                return;
            case round_state::denied:
                fail_round(error::not_acquired);
                return;
            case round_state::unreachable:
                fail_round(error::quorum_unreachable);
                return;
            case round_state::pending:
                return;
        }
    }

    // The quorum holds the lock: a lease if the validity left is enough.
    void grant(clock::time_point now) {
        const auto left = validity_left(options_.ttl, now - t0_, client_->config().drift_factor);
        if (left > options_.min_validity) {
            succeed(now, now + left, tally_.granted());
        } else {
            fail_round(error::validity_expired);
        }
    }

    void succeed(clock::time_point now, clock::time_point valid_until, std::size_t nodes_granted,
                 bool extend_now = false) {
        auto state = std::make_shared<lease_state>();
        state->client = client_;
        state->resource = resource_;
        state->kind = kind_;
        state->token = token_;
        state->fence = fence_;
        if (fenced_ && options_.reentrant) client_->holds().add(keys().lock, options_.owner.str(), state);
        if (fair_ && ticket_ != 0) {
            // Nodes that refused may still queue us: we no longer wait there. The nodes yet to
            // answer get it when they do (on_fair_reply).
            auto refused = granted_;
            for (std::size_t i = 0; i < refused.size(); ++i)
                refused[i] = !refused[i] && answered_[i];
            if (std::find(refused.begin(), refused.end(), true) != refused.end()) dequeue(refused);
        }
        state->node_timeout = node_timeout_;
        state->replicas = options_.replicas;
        state->replica_timeout = options_.replica_timeout;
        state->set_valid_until(valid_until);
        state->nodes_granted.store(static_cast<unsigned>(nodes_granted), std::memory_order_relaxed);
        client_->metrics().acquired.fetch_add(1, std::memory_order_relaxed);
        client_->metrics().acquire_latency(now - started_);
        if (options_.watchdog) {
            const auto every =
                options_.renew_every > milliseconds::zero() ? options_.renew_every : options_.ttl / 3;
            const auto hold_until =
                options_.max_hold > milliseconds::zero() ? now + options_.max_hold : clock::time_point::max();
            state->dog =
                std::make_shared<watchdog>(state, options_.ttl, std::max(every, milliseconds(1)), hold_until);
            state->dog->start();
        }
        if (extend_now)
            start_extend(state, options_.ttl, nullptr,
                         asio::bind_executor(client_->strand(), [](error_code) {}));
        // The message costs more than the rest of a grant: build it only for a caller who asked.
        std::string message;
        if (diag_) {
            const auto left = std::chrono::duration_cast<milliseconds>(valid_until - now);
            const std::string how = handed_over_to_us_ ? "handed over by the release" : "acquired";
            message =
                report_.summary(tally_, how + ", validity left " + std::to_string(left.count()) + " ms");
        }
        succeeded_ = true;
        finish({}, lease(std::move(state)), std::move(message));
    }

    // Nodes that denied hold another owner's token, so no key of ours; every other node may
    // (a timed-out SET may have run), so it gets the token-checked release.
    [[nodiscard]] std::vector<bool> nodes_to_release() const { return report_.not_denied(); }

    void fail_round(error_code cause) {
        const auto now = clock::now();
        const bool retry = options_.wait > milliseconds::zero() && now < deadline_;
        if (!retry) {
            leave();
            // A round lost early to denials may still be one in which most nodes are down (the
            // denials then come from other contenders' doomed attempts). The last round hears
            // every node out, at most one node timeout, so that the error names the real cause.
            if (cause == error::not_acquired && !tally_.all_answered()) {
                awaiting_stragglers_ = true;
                final_cause_ = cause;
                return;
            }
            finish_failed(cause);
            return;
        }
        // The next attempt waits for this one's releases as well as for the delay: a release
        // whose EVALSHA met NOSCRIPT is re-sent as EVAL, and must not overtake the next SET.
        auto mask = nodes_to_release();
        cleanups_pending_ = 0;
        for (bool b : mask)
            cleanups_pending_ += b ? 1 : 0;
        if (cleanups_pending_ > 0) {
            auto cleaned = [self = shared_from_this()](std::size_t, error_code, resp::value) {
                --self->cleanups_pending_;
                self->maybe_next_round();
            };
            node_call cleanup;
            kind_->round_cleanup(token_, ticket_, cleanup);
            client_->send_call(cleanup, mask, node_timeout_, std::move(cleaned));
        }
        sleeping_ = true;
        const auto time_left = std::chrono::ceil<milliseconds>(deadline_ - now);
        wait(policy_->after_failed_round(cause, tally_.granted() > 0, ticket_ != 0, time_left,
                                         client_->rng()));
    }

    // Registers where the plan says, then sleeps until its delay ends or a message comes.
    void wait(const wait_policy::plan& next) {
        listen_on(next.listen);
        retry_timer_.expires_after(next.delay);
        wait_for_retry_timer();
    }

    // A grant that came after the round was lost to denials: the round was split after all
    // (see wait_policy::after_late_split). The round's cleanup went to this node too.
    void late_split() {
        if (done_ || !sleeping_) return;
        const auto time_left = std::chrono::ceil<milliseconds>(deadline_ - clock::now());
        if (auto next = policy_->after_late_split(time_left, client_->rng())) {
            listen_on(next->listen);
            wake_by(clock::now() + next->delay);
        }
    }

    void listen_on(wait_policy::channel channel) {
        if (channel == wait_policy::channel::released) listen_on(keys().released);
        if (channel == wait_policy::channel::wake) listen_on(wake_channel_);
    }

    // Registers for the next wake-up on `channel` before the next try, then drops the last
    // registration: the channel stays subscribed throughout.
    void listen_on(const std::string& channel) {
        auto& listener = client_->listener();
        const auto previous = waiter_;
        waiter_ =
            listener.add(channel, [weak = weak_from_this()](std::size_t node, std::string_view payload) {
                auto self = weak.lock();
                if (!self) return;
                if (payload.starts_with(handoff_prefix)) {
                    self->on_handoff(node, payload.substr(handoff_prefix.size()));
                } else if (payload.starts_with(refused_prefix)) {
                    self->on_subscription_refused(payload.substr(refused_prefix.size()));
                } else if (payload == subscribed_notice) {
                    self->on_subscribed();
                } else {
                    self->on_released();
                }
            });
        if (previous != 0) listener.remove(channel, previous);
        waiter_channel_ = &channel;
        // Not from here: our caller is about to start the wait that the refusal would end.
        if (const auto* why = listener.refusal(channel)) {
            asio::post(client_->strand(),
                       [self = shared_from_this(), why = *why] { self->on_subscription_refused(why); });
        }
    }

    // A node refused our channel's SUBSCRIBE: no release message will wake us. From now on we
    // wait as wait_strategy::spin does (the retry backoff), and the refusal is in the message
    // of the acquire's diagnostics.
    void on_subscription_refused(std::string_view why) {
        if (done_ || !policy_->subscription_refused()) return;
        subscription_refused_ =
            "; waited by polling: a node refused the SUBSCRIBE (" + std::string(why) + ")";
        if (sleeping_) on_released();
    }

    void dequeue(const std::vector<bool>& nodes) {
        node_call leave_queue;
        if (kind_->leave_queue(token_, leave_queue))
            client_->send_call(leave_queue, nodes, client_->background_timeout(), {});
    }

    [[nodiscard]] std::vector<bool> only_node(std::size_t node) const {
        std::vector<bool> only(client_->node_count(), false);
        only[node] = true;
        return only;
    }

    // Releases whatever this attempt may hold; a fair waiter also leaves the queue, on every
    // node, and wakes the next waiter if the lock is free.
    void leave() {
        left_ = true;
        node_call release;
        kind_->release(token_, false, release);
        const bool queued = fair_ && options_.wait > milliseconds::zero();
        client_->send_call(release,
                           queued ? std::vector<bool>(client_->node_count(), true) : nodes_to_release(),
                           client_->background_timeout(), {});
    }

    void finish_failed(error_code cause) {
        if (cause == error::not_acquired && tally_.failed() > tally_.nodes() - tally_.quorum()) {
            cause = error::quorum_unreachable;
        }
        if (cause == error::quorum_unreachable) cause = report_.unreachable_cause();
        if (cause == error::not_acquired && options_.wait > milliseconds::zero()) cause = error::wait_timeout;
        if (cause == error::quorum_unreachable && replication_short_) cause = error::not_replicated;
        finish(cause, lease(), report_.summary(tally_, describe(cause)));
    }

    void maybe_next_round() {
        if (!done_ && !sleeping_ && cleanups_pending_ == 0) start_round();
    }

    static std::string describe(error_code ec) {
        if (ec == error::not_acquired) return "held by another owner";
        if (ec == error::wait_timeout) return "still held by another owner when the wait ran out";
        if (ec == error::quorum_unreachable) return "too many nodes failed or timed out";
        if (ec == error::server_error) return "too many nodes refused the command";
        if (ec == error::validity_expired) return "the quorum came after the validity ran out";
        if (ec == error::not_replicated) return "too few replicas acknowledged the grant";
        return ec.message();
    }

    void finish(error_code ec, lease l, std::string message) {
        if (done_) return;
        done_ = true;
        if (waiter_ != 0) client_->listener().remove(*waiter_channel_, waiter_);
        if (ec) client_->metrics().acquire_failed(ec);
        if (diag_) {
            diag_->message = std::move(message) + subscription_refused_;
            diag_->nodes = report_.outcomes();
            diag_->attempts = round_;
        }
        complete_on_handler_executor(std::move(handler_), client_->executor(), ec, std::move(l));
    }

    std::shared_ptr<client_state> client_;
    std::string resource_;
    lock_options options_;
    diagnostics* diag_;
    acquire_handler handler_;
    asio::steady_timer retry_timer_;
    round_report report_;

    std::string subscription_refused_;         // for the diagnostics (on_subscription_refused)
    std::string token_;                        // the current round's: the value it writes to the lock
    std::vector<std::string> earlier_tokens_;  // the rounds' before it, oldest first (see remember_earlier)
    std::shared_ptr<const lock_kind> kind_;
    node_call call_;  // the current round's acquire, which its replies are read against
    milliseconds node_timeout_{0};
    milliseconds set_timeout_{0};  // node_timeout_, plus replica_timeout with WAIT
    bool replication_short_ = false;
    std::optional<wait_policy> policy_;  // set by start()
    // A fair lock (fair.lua): our place in its queue.
    bool fair_ = false;
    std::string place_;  // our member in the queue, one for the whole acquisition
    std::string wake_channel_;
    std::string ticket_text_;   // the current round's ticket argument
    std::uint64_t ticket_ = 0;  // 0: none yet
    std::uint64_t round_ticket_max_ = 0;
    std::size_t round_heard_ = 0;
    // A fenced lock: the fence counter, and the fences the nodes numbered this round's grants.
    bool fenced_ = false;
    std::string fence_key_;
    std::vector<std::uint64_t> fences_;
    std::vector<bool> numbered_;  // per node: its fence was numbered this round (not a re-entry's)
    std::uint64_t fence_ = 0;
    std::size_t fence_confirmed_ = 0;  // nodes known to have a counter >= fence_ and our token
    std::size_t fence_pending_ = 0;
    bool writing_back_ = false;
    std::vector<bool> handed_over_;   // per node: a release handed the lock over to us (on_handoff)
    bool handed_over_to_us_ = false;  // the lease came from hand-offs, not from a round
    std::vector<bool> answered_;      // per node, in the current round
    std::vector<bool> granted_;
    bool succeeded_ = false;
    release_listener::waiter_id waiter_ = 0;
    const std::string* waiter_channel_ = nullptr;  // keys().released or wake_channel_
    unsigned wait_generation_ = 0;
    clock::time_point started_;
    clock::time_point deadline_;

    unsigned round_ = 0;
    clock::time_point t0_;
    vote_tally tally_{1};
    bool contended_ = false;
    bool sleeping_ = false;
    bool awaiting_stragglers_ = false;
    bool left_ = false;            // leave() sent the acquisition's final release
    bool awaiting_holds_ = false;  // a fenced reentrant round waits for hold_undecided() to end
    error_code final_cause_;
    int cleanups_pending_ = 0;
    bool done_ = false;
};

}  // namespace

void start_acquire(std::shared_ptr<client_state> client, std::string resource, lock_options options,
                   diagnostics* diag, acquire_handler handler) {
    auto strand = client->strand();
    auto op = std::make_shared<acquire_op>(std::move(client), std::move(resource), std::move(options), diag,
                                           std::move(handler));
    op->connect_cancellation();
    asio::post(strand, [op] { op->start(); });
}

}  // namespace redlock::detail
