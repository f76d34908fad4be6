// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_LOCK_ACQUIRE_ACQUIRE_ROUND_HPP
#define REDLOCK_LOCK_ACQUIRE_ACQUIRE_ROUND_HPP

#include "lock/acquire/fence_settlement.hpp"
#include "lock/acquire/quorum.hpp"

#include <boost/container/small_vector.hpp>
#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::detail {

/// The rounds of one acquisition, without I/O: each round's token, the nodes' votes and what
/// they decide, the fence settlement, and what carries over between rounds (the earlier rounds'
/// tokens, a fair waiter's ticket). The acquire operation feeds it the answers the lock's kind
/// read and executes the steps it returns.
///
/// States of a round: counting (until a quorum is certain either way), then one of: won (a
/// grant, or first the fence's write-backs, or first the answers that say whether a fenced
/// re-entry entered an existing hold), lost (the acquire retries or gives up), or, for the
/// final round lost to denials, hearing out its stragglers so that the error names the cause.
class acquire_round {
public:
    using clock = std::chrono::steady_clock;

    /// What the round asks of the acquire after an event.
    struct step {
        enum class action {
            none,
            grant,    ///< a quorum holds the lock (fence settled): a lease if validity is left
            fail,     ///< the round is lost for `cause`: retry or give up
            give_up,  ///< the final round heard every node: fail the acquire for `cause`
        } what = action::none;
        boost::system::error_code cause;
        std::vector<std::size_t> write_back;  ///< nodes to raise to fence() (fence_writeback.lua)
        bool decided = false;                 ///< this vote decided the round
    };

    /// `resources`: how many fences a fenced grant carries (several resources at once).
    acquire_round(std::size_t nodes, bool fenced, std::size_t resources = 1)
        : nodes_(nodes), fenced_(fenced), resources_(resources), tally_(nodes) {}

    // --- rounds and their tokens -----------------------------------------------------------------
    /// The next round, which writes `token`, starting at `t0` (before its first send, so the
    /// time its commands spend queued counts against the validity).
    void begin(std::string token, clock::time_point t0);
    [[nodiscard]] unsigned number() const noexcept { return number_; }
    [[nodiscard]] const std::string& token() const noexcept { return token_; }
    [[nodiscard]] clock::time_point started() const noexcept { return t0_; }
    /// The round's before this one, which a lock still holding it is ours to take over; empty.
    [[nodiscard]] std::string_view previous_token() const noexcept;
    /// One of this acquisition's earlier rounds' (the latest few).
    [[nodiscard]] bool is_earlier_token(std::string_view token) const;

    // --- the current round's votes ---------------------------------------------------------------
    [[nodiscard]] const vote_tally& tally() const noexcept { return tally_; }
    /// Votes count until the round is decided, and after that while the final round hears its
    /// stragglers, or a fenced re-entry waits for the answers that settle its fence.
    [[nodiscard]] bool counting() const noexcept {
        return !tally_.decided() || awaiting_stragglers_ || awaiting_holds_;
    }
    /// Some node may still grant, or the round won and settles its fence: a cancel releases.
    [[nodiscard]] bool may_hold() const noexcept {
        return number_ > 0 && (!tally_.decided() || fence_.writing_back() || awaiting_holds_);
    }
    /// The nodes that may hold this round's token: every node that did not deny (a node that
    /// failed or has not answered may have run the command). Where a cleanup goes.
    [[nodiscard]] std::vector<bool> nodes_to_release() const;
    void contended() noexcept { contended_ = true; }
    [[nodiscard]] bool was_contended() const noexcept { return contended_; }

    /// Node `node` answered (a fair round records every answer, also after the decision).
    void answered(std::size_t node, bool granted);
    /// Node `node` granted, with its fences if the lock is fenced (one per resource).
    void granted(std::size_t node, std::span<const std::int64_t> fences, bool numbered);
    void granted(std::size_t node, std::optional<std::int64_t> fence, bool numbered) {
        granted(node, fence ? std::span<const std::int64_t>(&*fence, 1) : std::span<const std::int64_t>(),
                numbered);
    }
    /// Counts node `node`'s vote. `outer_fence`: the fence of this client's live reentrant hold
    /// that the round may enter (0: none).
    step count(std::size_t node, vote v, std::uint64_t outer_fence);
    /// A fence write-back's answer (`raised`: the node has our token and the fence now).
    step on_writeback(bool raised);
    /// A node granted after the round was decided: write it back (the fence it returned is not
    /// ours) if the round won or is settling its fence.
    [[nodiscard]] bool late_grant_behind(std::span<const std::int64_t> node_fences) const noexcept;
    [[nodiscard]] bool late_grant_behind(std::int64_t node_fence) const noexcept {
        return late_grant_behind(std::span<const std::int64_t>(&node_fence, 1));
    }
    /// The final round was lost to denials before every node answered: hear them out.
    void await_stragglers(boost::system::error_code cause) noexcept;
    /// The acquire returned a lease from this round.
    void succeeded() noexcept { succeeded_ = true; }
    [[nodiscard]] bool has_succeeded() const noexcept { return succeeded_; }
    [[nodiscard]] std::uint64_t fence() const noexcept { return fence_.fence(); }
    /// One per resource.
    [[nodiscard]] std::span<const std::uint64_t> fences() const noexcept { return fence_.fences(); }

    /// How long the lock is known to hold from `now` if the quorum holds it: nothing when that
    /// is not above `min_validity` (a quorum that came after the validity ran out).
    [[nodiscard]] std::optional<clock::duration> validity(
        clock::time_point now, std::chrono::milliseconds ttl, double drift_factor,
        std::chrono::milliseconds min_validity) const noexcept;

    // --- a fair waiter ---------------------------------------------------------------------------
    /// A node's ticket for us. Once a quorum of nodes has answered, the largest ticket among
    /// them is ours for good: a waiter queued before we asked is queued on a quorum too, which
    /// shares a node with ours, and that node numbered us above it. True when that happened
    /// now (`wait`: we queue at all).
    bool note_ticket(std::int64_t ticket, bool wait);
    [[nodiscard]] std::uint64_t ticket() const noexcept { return ticket_; }
    /// Node `node` handed the lock over to us: how many nodes have, or 0 if it had already.
    std::size_t hand_over(std::size_t node);
    /// The hand-offs are the lock: its value is "<place>:<this round's token>"; the nodes that
    /// handed over count as granted.
    void take_handoff(std::string_view place);
    /// The nodes that answered and did not grant (a fair waiter is still queued there).
    [[nodiscard]] std::vector<bool> refused() const;

private:
    step decide(std::uint64_t outer_fence);
    step settle_fence(std::uint64_t outer_fence);
    // A won round in which some nodes, but not yet a quorum, report our existing hold: whether
    // it is a re-entry depends on the nodes still to answer (at most a node timeout).
    [[nodiscard]] bool hold_undecided() const;

    std::size_t nodes_;
    bool fenced_;
    std::size_t resources_;
    unsigned number_ = 0;
    std::string token_;
    std::vector<std::string> earlier_tokens_;  // oldest first
    clock::time_point t0_;
    vote_tally tally_;
    // Per node, in the current round. Inline up to 8 nodes: a round allocates nothing for them.
    using node_flags = boost::container::small_vector<bool, 8>;
    node_flags answered_;
    node_flags granted_;
    node_flags handed_over_;
    node_flags denied_;
    fence_settlement fence_;
    bool contended_ = false;
    bool awaiting_holds_ = false;
    bool awaiting_stragglers_ = false;
    boost::system::error_code final_cause_;
    bool succeeded_ = false;
    std::uint64_t ticket_ = 0;  // 0: none yet
    std::uint64_t round_ticket_max_ = 0;
    std::size_t round_heard_ = 0;
};

/// The error of an acquisition that gave up after its final round was lost for `cause`:
/// not_acquired with more nodes failed than a quorum can spare is quorum_unreachable, and that
/// is `unreachable` (round_report::unreachable_cause: server_error when every failed node
/// refused the command), or not_replicated when a grant lacked its replicas
/// (`replication_short`); not_acquired after a wait (`waited`) is wait_timeout.
[[nodiscard]] boost::system::error_code acquisition_error(boost::system::error_code cause,
                                                          const vote_tally& tally,
                                                          boost::system::error_code unreachable, bool waited,
                                                          bool replication_short);
/// What such an error means, for the acquire's diagnostics.
[[nodiscard]] std::string describe_acquisition_error(boost::system::error_code ec);

}  // namespace redlock::detail

#endif
