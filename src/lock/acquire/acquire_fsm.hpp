// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_LOCK_ACQUIRE_ACQUIRE_FSM_HPP
#define REDLOCK_LOCK_ACQUIRE_ACQUIRE_FSM_HPP

#include "lock/acquire/acquire_context.hpp"
#include "lock/acquire/acquire_events.hpp"
#include "lock/acquire/acquire_round.hpp"
#include "lock/acquire/round_report.hpp"
#include "lock/acquire/wait_policy.hpp"
#include "lock/kinds/lock_kind.hpp"
#include <redlock/lock_options.hpp>

#include <boost/container/small_vector.hpp>
#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::detail {

/// What an acquisition knows from its start and keeps.
struct acquire_setup {
    std::string resource;                ///< for messages: several resources' names joined
    std::vector<std::string> resources;  ///< several resources (sorted); empty: one
    lock_options options;
    std::shared_ptr<const lock_kind> kind;
    std::size_t nodes = 1;
    retry_config client_retry;  ///< client_config::retry, unless the options have their own
    double drift_factor = 0.01;
    std::chrono::milliseconds node_timeout{0};        ///< a round's (client_state::node_timeout_for)
    std::chrono::milliseconds background_timeout{0};  ///< releases nobody waits for
    bool asks_replication_id = false;                 ///< client_config::failover_quarantine
    bool wants_grant_message = false;                 ///< the caller asked for diagnostics
};

/// One acquisition, without I/O: its rounds (acquire_round counts the votes that the lock's kind
/// read), the waits between them (wait_policy), its cleanups and its end. Each event goes in by
/// resume() with the time it happened and the random source; out come the actions to run, in
/// order (acquire_op runs them). No clock, no socket, no timer: a test drives it with scripted
/// answers and a fake clock.
///
/// Its life: start -> a round (send to every node, count the answers) -> won: the lease (after
/// the fence's write-backs), or lost: give up, or clean up, listen and sleep until a timer, a
/// release message or a hand-off ends the sleep -> the next round. A cancel releases wherever
/// the attempt may hold. After the end, answers still come: a won round's stragglers that
/// refused take our place out of their queue, and a late fenced grant is written back.
class acquire_fsm {
public:
    using clock = std::chrono::steady_clock;
    using milliseconds = std::chrono::milliseconds;
    using actions = boost::container::small_vector<acquire_action, 4>;

    acquire_fsm(acquire_setup setup, acquire_context& context);
    // It refers to parts of itself (kind_, options_, the actions' calls): it stays where it is made.
    acquire_fsm(const acquire_fsm&) = delete;
    acquire_fsm& operator=(const acquire_fsm&) = delete;

    /// Runs `e`, which happened at `now`; returns what to do about it, valid until the next
    /// resume(), which must not come before these actions are run.
    [[nodiscard]] actions& resume(const acquire_event& e, clock::time_point now, std::mt19937_64& rng);

    [[nodiscard]] const lock_options& options() const noexcept { return options_; }
    /// For the diagnostics: the rounds so far and what each node answered in the last.
    [[nodiscard]] unsigned attempts() const noexcept { return round_.number(); }
    [[nodiscard]] std::vector<node_outcome> outcomes() const { return report_.outcomes(); }

private:
    // --- rounds (acquire_fsm.cpp) ----------------------------------------------------------------
    void start();
    void cancel();
    void start_round();
    [[nodiscard]] bool counting(unsigned round) const;
    void on_round_reply(const acquire_event& e);
    void on_answer(std::size_t node, acquire_answer a);
    void note_place(queue_place place);
    // The key holds the token of an earlier round of ours whose reply was lost: take it over
    // (lock_kind::take_over), or free it once our final release went out.
    void held_by_earlier_round(std::size_t node, const std::string& answered);
    void on_takeover_reply(const acquire_event& e);
    // A granting node's vote; with lock_options::replicas, once enough replicas have the grant:
    // by `pinned`, the verdict of the WAIT that came back right behind it, or else by a WAIT
    // sent now (a cluster's call split into steps came back without one).
    void count_grant(std::size_t node, std::optional<replication_verdict> pinned = std::nullopt);
    void count(std::size_t node, vote v, boost::system::error_code ec, std::string detail);
    void run(const acquire_round::step& s);
    // Raises node `node`'s fence counter to ours where our token holds the lock.
    void write_back(std::size_t node);
    void on_writeback_reply(const acquire_event& e);
    void grant();
    void succeed(clock::time_point valid_until, std::size_t nodes_granted, bool extend_now = false);
    void dequeue(const std::vector<bool>& where);
    // Releases whatever this attempt may hold; a waiter also takes its trace away on every node
    // (a place in a queue, waking the next waiter if the lock is free; a mark).
    void leave();
    // The acquisition leaves a trace on the nodes between its rounds (between_rounds), which
    // its end takes away.
    [[nodiscard]] bool waits_between_rounds() const noexcept;
    // Whether the nodes that refused a won round may still hold our trace.
    [[nodiscard]] bool leaves_refusers() const noexcept;
    /// `why_now`: said after the error when the acquire gives up before its wait ends.
    void finish_failed(boost::system::error_code cause, std::string_view why_now = {});
    void finish(boost::system::error_code ec, std::string message, std::optional<won_lock> won = {});

    // --- between rounds (acquire_fsm_waits.cpp) ---------------------------------------------------
    // A lost round: give up, or clean up and sleep until the next one.
    void fail_round(boost::system::error_code cause);
    // A grant that came after the round was lost to denials: the round was split after all
    // (see wait_policy::after_late_split).
    void late_split();
    void on_released();
    void on_handoff(std::size_t node, std::string_view round_token);
    void on_subscribed();
    void on_subscription_refused(std::string_view why);
    void on_sleep_ended(unsigned sleep);
    // Starts the next round once the sleep and this round's cleanups are over.
    void maybe_next_round();
    void sleep_for(clock::duration delay);
    // Ends the sleep at `at` instead, if that is sooner.
    void end_sleep_by(clock::time_point at);
    void end_sleep_now();
    void listen_on(wait_policy::channel channel);

    // --- what goes out ---------------------------------------------------------------------------
    // Objects that the actions of one resume() point to: they keep their address, and the next
    // resume() reuses them (an acquisition that builds none allocates none).
    template <class T>
    class reused {
    public:
        T& next() {
            if (used_ == items_.size()) items_.push_back(std::make_unique<T>());
            return *items_[used_++];
        }
        void reset() noexcept { used_ = 0; }

    private:
        std::vector<std::unique_ptr<T>> items_;
        std::size_t used_ = 0;
    };

    acquire_action& act(acquire_action::type what);
    node_call& new_call();
    // `nodes`: null for every node.
    void send(const node_call& call, const std::vector<bool>* nodes, milliseconds timeout,
              std::optional<acquire_event::type> reply = std::nullopt);
    // A set of nodes for the actions of this resume().
    [[nodiscard]] const std::vector<bool>& nodes(std::vector<bool> flags);
    [[nodiscard]] const std::vector<bool>& only_node(std::size_t node);
    [[nodiscard]] const resource_keys& keys() const { return kind_->keys(); }

    acquire_setup setup_;
    acquire_context& context_;
    const std::shared_ptr<const lock_kind>& kind_;  // setup_.kind
    const lock_options& options_;                   // setup_.options
    const between_rounds between_;                  // the kind's: what a waiting round leaves behind
    acquire_round round_;
    wait_policy policy_;
    round_report report_;

    // The event being run.
    clock::time_point now_;
    std::mt19937_64* rng_ = nullptr;
    actions out_;
    reused<node_call> outbox_;             // the calls of out_
    reused<std::vector<bool>> node_sets_;  // the node sets of out_
    reused<std::string> outbox_strings_;   // what their calls point to, beside the fsm's own

    bool waits_ = false;        // lock_options::wait > 0
    bool found_held_ = false;   // a round was contended: the acquire counts in metrics().wait_time
    std::string wake_channel_;  // a fair waiter's own channel
    clock::time_point started_;
    clock::time_point deadline_;
    std::chrono::nanoseconds round_suspended_{0};  // suspended_so_far() as the current round began

    node_call call_;                       // the current round's acquire, which its replies are read against
    std::size_t takeover_wait_reply_ = 0;  // where the replies of a take-over have their WAIT's
    std::size_t takeover_id_reply_ = 0;    // and their INFO's
    std::size_t writeback_wait_reply_ = 0;
    std::string subscription_refused_;  // for the diagnostics (on_subscription_refused)
    bool replication_short_ = false;
    bool handed_over_to_us_ = false;  // the lease came from hand-offs, not from a round
    std::size_t blocked_by_ = 0;      // of several resources: the one the last refusal named (listened to)
    bool left_ = false;               // leave() sent the acquisition's final release
    int cleanups_pending_ = 0;
    bool sleeping_ = false;
    unsigned sleep_ = 0;  // the current sleep's number: a timer of an earlier one is stale
    clock::time_point wake_at_;
    bool done_ = false;
};

}  // namespace redlock::detail

#endif
