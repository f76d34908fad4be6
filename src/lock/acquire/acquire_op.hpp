// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_LOCK_ACQUIRE_ACQUIRE_OP_HPP
#define REDLOCK_LOCK_ACQUIRE_ACQUIRE_OP_HPP

#include "lock/acquire/acquire_round.hpp"
#include "lock/acquire/release_listener.hpp"
#include "lock/acquire/retry_sleep.hpp"
#include "lock/acquire/round_report.hpp"
#include "lock/acquire/start_acquire.hpp"
#include "lock/acquire/wait_policy.hpp"
#include "lock/client/cancel_on_slot.hpp"
#include "lock/client/client_state.hpp"
#include "lock/kinds/lock_kind.hpp"
#include <redlock/diagnostics.hpp>
#include <redlock/lease.hpp>
#include <redlock/lock_options.hpp>

#include <boost/system/error_code.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::detail {

/// One async_acquire: the I/O shell around the pure pieces. The lock's kind builds each round's
/// calls and reads the answers (kinds/), acquire_round counts them and decides, wait_policy says
/// how to wait between rounds; this class sends, listens, sleeps and hands a won round to its
/// lease (lease_grant). Its rounds are in acquire_op.cpp, its waits between them in
/// acquire_waiting.cpp. On the client's strand.
class acquire_op final : public std::enable_shared_from_this<acquire_op>, public release_waiter {
    using error_code = boost::system::error_code;
    using clock = std::chrono::steady_clock;
    using milliseconds = std::chrono::milliseconds;
    using step = acquire_round::step;

public:
    /// `resources`: several resources at once (sorted, distinct, at least two), `resource` naming
    /// them for messages; empty: the one `resource`.
    acquire_op(std::shared_ptr<client_state> client, std::string resource, lock_options options,
               diagnostics* diag, acquire_handler handler, std::vector<std::string> resources = {})
        : client_(std::move(client)),
          resource_(std::move(resource)),
          resources_(std::move(resources)),
          options_(std::move(options)),
          diag_(diag),
          handler_(std::move(handler)),
          sleep_(client_->strand()),
          report_(*client_, "acquire", resource_),
          round_(client_->node_count(), options_.fenced, std::max<std::size_t>(resources_.size(), 1)) {}

    // On the initiating thread, before start().
    void connect_cancellation() { cancel_on_slot(handler_, shared_from_this(), client_->strand()); }

    void start();
    void cancel();

    // --- what wakes a waiter (acquire_waiting.cpp; see release_waiter) ----------------------------
    // Woken by a release message (or told to try again): try now rather than at the end of
    // the wait, or soon (see wait_policy::after_release).
    void on_released() override;
    // fair.lua handed the lock over to our place on `node`: a release found us at the head of
    // its queue, with the hand-off that our round `round_token` registered when it was refused
    // there. The lock is ours without a round trip once a quorum has handed it over, while we
    // wait after that very round (whose start bounds when the hand-off was registered) with
    // its cleanups done. Any other hand-off wakes us: the next round takes it over.
    void on_handoff(std::size_t node, std::string_view round_token) override;
    // If we sleep, our last round may have run on a node before the SSUBSCRIBE: try once more.
    // While a round is on its way, no: a node writes its replies in the order it runs the
    // commands, so that round most likely ran after it.
    void on_subscribed() override;
    // From now on we wait as wait_strategy::spin does (the retry backoff), and the refusal is
    // in the message of the acquire's diagnostics.
    void on_subscription_refused(std::string_view why) override;

private:
    // --- rounds (acquire_op.cpp) -----------------------------------------------------------------
    // Each round writes a token of its own. A round's cleanup may reach a node after the next
    // round's request does (sent on a connection given up for a new one, whose bytes were still
    // on their way): with one token for all rounds it would delete the later round's grant.
    bool new_token(std::string& out);
    [[nodiscard]] const resource_keys& keys() const { return kind_->keys(); }

    void start_round();
    [[nodiscard]] bool counting(unsigned round) const;
    // A node's answer to the current round, read by the lock's kind.
    void on_answer(std::size_t node, acquire_answer a);
    void note_place(queue_place place);
    // The key holds the token of an earlier round of ours whose reply was lost: take it over
    // (lock_kind::take_over), or free it once our final release went out.
    void held_by_earlier_round(std::size_t node, const std::string& earlier);
    // A granting node's vote; with lock_options::replicas, once enough replicas have the grant:
    // by `pinned`, the verdict of the WAIT that came back right behind it (judge_pinned_wait), or
    // else by a WAIT sent now (a cluster's call split into steps came back without one).
    void count_grant(std::size_t node, std::optional<replication_verdict> pinned = std::nullopt);
    void count(std::size_t node, vote v, error_code ec, std::string detail);
    // Executes what the round asks.
    void run(const step& s);
    // Raises node `node`'s fence counter to ours where our token holds the lock.
    void write_back(std::size_t node);
    // The quorum holds the lock: a lease if the validity left is enough.
    void grant(clock::time_point now);
    void succeed(clock::time_point now, clock::time_point valid_until, std::size_t nodes_granted,
                 bool extend_now = false);
    void dequeue(const std::vector<bool>& nodes);
    [[nodiscard]] std::vector<bool> only_node(std::size_t node) const;
    // Releases whatever this attempt may hold; a fair waiter also leaves the queue, on every
    // node, and wakes the next waiter if the lock is free; a waiting writer takes its mark away.
    void leave();
    // A fair waiter, or a writer that marks the resource: the acquisition leaves something on
    // the nodes between its rounds, which its end takes away.
    [[nodiscard]] bool waits_between_rounds() const noexcept {
        return waits_ && (kind_->queues() || kind_->marks_waiting());
    }
    // Whether the nodes that refused a won round may still hold our place: a ticketed fair
    // waiter's, or a writer's mark.
    [[nodiscard]] bool leaves_refusers(const acquire_round& round) const noexcept {
        return (kind_->queues() && round.ticket() != 0) || (kind_->marks_waiting() && waits_);
    }
    /// `why_now`: said after the error when the acquire gives up before its wait ends.
    void finish_failed(error_code cause, std::string_view why_now = {});
    void finish(error_code ec, lease l, std::string message);

    // --- between rounds (acquire_waiting.cpp) -----------------------------------------------------
    // A lost round: give up, or clean up and sleep until the next one.
    void fail_round(error_code cause);
    // A grant that came after the round was lost to denials: the round was split after all
    // (see wait_policy::after_late_split). The round's cleanup went to this node too.
    void late_split();
    // What runs when a sleep ends by its timer.
    [[nodiscard]] auto next_round_after_sleep() {
        return [self = shared_from_this()] { self->maybe_next_round(); };
    }
    // Starts the next round once the sleep and this round's cleanups are over.
    void maybe_next_round();
    void listen_on(wait_policy::channel channel);
    // Registers for the next wake-up on `channel` before the next try, then drops the last
    // registration: the channel stays subscribed throughout.
    void listen_on(const std::string& channel);

    std::shared_ptr<client_state> client_;
    std::string resource_;
    std::vector<std::string> resources_;
    lock_options options_;
    diagnostics* diag_;
    acquire_handler handler_;
    retry_sleep sleep_;
    round_report report_;
    acquire_round round_;

    std::shared_ptr<const lock_kind> kind_;  // set by start(), with the rest of what an acquire knows
    std::optional<wait_policy> policy_;
    bool waits_ = false;       // lock_options::wait > 0
    bool found_held_ = false;  // a round was contended: the acquire counts in metrics().wait_time
    milliseconds node_timeout_{0};
    std::string wake_channel_;  // a fair waiter's own channel
    clock::time_point started_;
    std::chrono::nanoseconds round_suspended_{0};  // suspended_so_far() as the current round began
    clock::time_point deadline_;

    node_call call_;                    // the current round's acquire, which its replies are read against
    std::string subscription_refused_;  // for the diagnostics (on_subscription_refused)
    bool replication_short_ = false;
    bool handed_over_to_us_ = false;  // the lease came from hand-offs, not from a round
    release_listener::waiter_id waiter_ = 0;
    const std::string* waiter_channel_ = nullptr;  // a released channel of the kind's, or wake_channel_
    std::size_t blocked_by_ = 0;  // of several resources: the one the last refusal named (listened to)
    bool left_ = false;           // leave() sent the acquisition's final release
    int cleanups_pending_ = 0;
    bool done_ = false;
};

}  // namespace redlock::detail

#endif
