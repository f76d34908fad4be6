// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_LOCK_ACQUIRE_WAIT_POLICY_HPP
#define REDLOCK_LOCK_ACQUIRE_WAIT_POLICY_HPP

#include <redlock/config.hpp>

#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>

namespace redlock::detail {

/// How a waiting acquire waits between its rounds: by spinning (the retry backoff), by
/// notification (a release message on the resource's channel, capped by the holder's PTTL), or
/// in a fair queue (a message on the waiter's own channel, refreshing its place). No I/O and no
/// clock of its own: the acquire tells it what its rounds found and executes the plans it gets.
///
/// Why split rounds are special: a round in which some nodes granted, too few, is cleaned up by
/// quiet releases, so no message says that the lock is free again, and any of the contenders
/// may take it next. Each tries again by itself, soon, after a random share of a spread that
/// doubles with each split in a row (up to retry.max_delay): contenders that keep splitting the
/// nodes, or a crashed one's minority that keeps the rest from a quorum until it expires, cost
/// a few tries rather than a busy loop.
class wait_policy {
public:
    using clock = std::chrono::steady_clock;
    using milliseconds = std::chrono::milliseconds;

    /// The channel to register on before the next try, so that no message is missed.
    enum class channel {
        none,
        released,  ///< the resource's release messages
        wake,      ///< the fair waiter's own channel
    };
    /// What to do after a failed round: register on `listen`, then try again after `delay`
    /// (or sooner, when a message comes).
    struct plan {
        clock::duration delay{};
        channel listen = channel::none;
    };
    /// What a release message (or anything else that says "try again") asks of a sleeping waiter.
    struct wake_up {
        bool at_once = true;       ///< start the next round now
        clock::duration within{};  ///< else: by a random delay up to this
    };

    /// `notify`: waits for messages (wait_strategy::notify with a wait); `queued`: in a
    /// queue; `nodes`: N.
    wait_policy(bool notify, bool queued, std::size_t nodes, retry_config retry,
                milliseconds queue_timeout) noexcept
        : notify_(notify), queued_(queued), nodes_(nodes), retry_(retry), queue_timeout_(queue_timeout) {}

    /// Whether release messages wake us: a round then asks how long the holder's key lives.
    [[nodiscard]] bool notifies() const noexcept { return notify_; }
    /// A node refused the channel's SSUBSCRIBE: no message will wake us, poll from now on.
    /// True if it changed anything.
    bool subscription_refused() noexcept;

    // --- what the rounds tell it ---------------------------------------------------------------
    /// A round starts: what the last one learned about the holder is stale.
    void round_started() noexcept;
    /// A denying node's PTTL of the holder's key. -1: a key without expiry (not a lock of
    /// ours): no bound. -2 or 0: it expired between our try and the PTTL: try again almost at once.
    void holder_pttl(std::int64_t pttl) noexcept;
    /// A fair round: the queue's head is us on some node.
    void at_queue_head() noexcept { queue_head_ = true; }
    /// A fair round that queues us (we have a ticket, or a single node numbers us).
    void queued_this_round(bool queued) noexcept { queued_this_round_ = queued; }
    /// The round was decided after `took` (it times the split spread).
    void round_decided(clock::duration took) noexcept { last_round_ = took; }
    /// A wake-up came while the round was on its way: that round may have been refused before
    /// the release, so the next wait is none.
    void woken_during_round() noexcept { woken_early_ = true; }

    // --- the decisions -------------------------------------------------------------------------
    /// After a failed round that is retried: `cause` its error, `split` whether some nodes
    /// granted, `ticketed` whether a fair waiter has its ticket, `time_left` until the wait ends.
    plan after_failed_round(boost::system::error_code cause, bool split, bool ticketed,
                            milliseconds time_left, std::mt19937_64& rng);
    /// A release message while we sleep. With N > 1, the waiters the same message woke in other
    /// processes may split the nodes between them if all try at once: after a split round, a
    /// random delay of up to two of our own rounds (at most 2 ms) sets them apart, at the cost
    /// of about one round of hand-off latency. A fair waiter is woken alone: at once.
    [[nodiscard]] wake_up after_release() const noexcept;
    /// A grant came after the round was lost to denials (which came first): the round was split
    /// after all, and the wait that began for a release message becomes the shorter one after a
    /// split. Nothing when the current wait is not that one, or no time is left.
    std::optional<plan> after_late_split(milliseconds time_left, std::mt19937_64& rng);
    /// About two of our own rounds, so that contenders drawing from it part by a round; at least
    /// 100 us, at most 2 ms.
    [[nodiscard]] clock::duration split_spread() const noexcept;
    /// Whether the last failed round was split (some nodes granted, too few).
    [[nodiscard]] bool last_round_split() const noexcept { return last_round_split_; }

private:
    clock::duration after_split(milliseconds time_left, std::mt19937_64& rng);
    milliseconds notify_wait(milliseconds time_left) noexcept;
    milliseconds queue_wait(milliseconds backoff, milliseconds time_left, boost::system::error_code cause,
                            bool ticketed, channel& listen) const noexcept;

    bool notify_;
    bool queued_;
    std::size_t nodes_;
    retry_config retry_;
    milliseconds queue_timeout_;

    milliseconds holder_pttl_{0};  // 0: unknown
    bool queue_head_ = false;
    bool queued_this_round_ = false;
    bool woken_early_ = false;
    clock::duration last_round_{};
    bool last_round_split_ = false;
    unsigned splits_in_a_row_ = 0;
    unsigned notify_waits_ = 0;
    bool waiting_for_message_ = false;  // the current wait is notify_wait's, after an unsplit round
};

/// What a fair waiter does with hand-offs: a release found it at the head of a node's queue and
/// handed the lock over to its place there.
struct handoff_verdict {
    enum class action {
        wait_for_more,  ///< fewer than a quorum so far: the others come within about a round
        try_round,      ///< too little validity left: a round takes it over with the full ttl
        take,           ///< the lock is ours for `left`
    } what = action::wait_for_more;
    std::chrono::steady_clock::duration left{};
    bool extend_now = false;  ///< less than two thirds of the ttl left: extend at once
};

/// `handed` nodes of a quorum of `quorum` handed the lock over, `since_round` after the start
/// of the round that registered the hand-offs. fair.lua set the lock to expire after our ttl,
/// but not past our place's deadline, which is queue_timeout after the round's request arrived.
[[nodiscard]] handoff_verdict judge_handoff(std::size_t handed, std::size_t quorum,
                                            std::chrono::milliseconds ttl,
                                            std::chrono::milliseconds queue_timeout,
                                            std::chrono::steady_clock::duration since_round,
                                            double drift_factor,
                                            std::chrono::milliseconds min_validity) noexcept;

}  // namespace redlock::detail

#endif
