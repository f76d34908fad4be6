// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_LOCK_ACQUIRE_QUORUM_HPP
#define REDLOCK_LOCK_ACQUIRE_QUORUM_HPP

#include <chrono>
#include <cstddef>

namespace redlock::detail {

/// N/2 + 1: any two quorums of the same N nodes share a node.
[[nodiscard]] constexpr std::size_t quorum_of(std::size_t nodes) noexcept {
    return nodes / 2 + 1;
}

/// How long a lease taken at t0 is known to hold after `elapsed`:
/// ttl * drift_factor + 2 ms: how much a lease of `ttl` may be off between clocks.
[[nodiscard]] std::chrono::steady_clock::duration drift_allowance(std::chrono::milliseconds ttl,
                                                                  double drift_factor) noexcept;

/// ttl - elapsed - (ttl * drift_factor + 2 ms). The 2 ms cover the granularity of the servers'
/// expiry; the drift term covers clocks that run at different rates. Negative once it ran out.
[[nodiscard]] std::chrono::steady_clock::duration validity_left(std::chrono::milliseconds ttl,
                                                                std::chrono::steady_clock::duration elapsed,
                                                                double drift_factor) noexcept;

/// What one node answered to a lock command.
enum class vote {
    granted,  ///< holds our token now (acquire, extend) or deleted it (release)
    denied,   ///< held by another owner, or our key is gone
    failed,   ///< timeout, lost reply, connection failure, error reply
};

/// Where a round stands after the votes counted so far.
enum class round_state {
    pending,      ///< a quorum is still possible either way
    won,          ///< granted on a quorum
    denied,       ///< a quorum is impossible and no more than N - quorum nodes failed: contention
    unreachable,  ///< more than N - quorum nodes failed: no quorum whatever the others say
};

/// Counts the votes of one round over N nodes and decides as soon as the outcome is certain,
/// so a slow node never delays a round that a quorum already decided.
class vote_tally {
public:
    explicit vote_tally(std::size_t nodes) noexcept : nodes_(nodes), quorum_(quorum_of(nodes)) {}

    /// Counts one vote; returns the state after it. Once decided, the state never changes.
    round_state add(vote v) noexcept;

    [[nodiscard]] round_state state() const noexcept { return state_; }
    [[nodiscard]] bool decided() const noexcept { return state_ != round_state::pending; }
    [[nodiscard]] bool all_answered() const noexcept { return granted_ + denied_ + failed_ == nodes_; }
    [[nodiscard]] std::size_t nodes() const noexcept { return nodes_; }
    [[nodiscard]] std::size_t quorum() const noexcept { return quorum_; }
    [[nodiscard]] std::size_t granted() const noexcept { return granted_; }
    [[nodiscard]] std::size_t denied() const noexcept { return denied_; }
    [[nodiscard]] std::size_t failed() const noexcept { return failed_; }

private:
    std::size_t nodes_;
    std::size_t quorum_;
    std::size_t granted_ = 0;
    std::size_t denied_ = 0;
    std::size_t failed_ = 0;
    round_state state_ = round_state::pending;
};

}  // namespace redlock::detail

#endif
