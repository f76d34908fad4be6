// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_LOCK_ACQUIRE_FENCE_SETTLEMENT_HPP
#define REDLOCK_LOCK_ACQUIRE_FENCE_SETTLEMENT_HPP

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace redlock::detail {

/// How a fenced round settles its fence once a quorum granted, for any kind of lock. No I/O:
/// the acquire writes back the nodes it names and reports their answers.
///
/// The fence is the largest of the granting quorum's. Nodes whose counter is below it are
/// raised to it (fence_writeback.lua, only where our token still holds the lock) until a quorum
/// has it: any later grant's quorum shares a node with that one, so its fence is larger. Where
/// a quorum already returned the largest, the lease does not wait (N = 1).
///
/// A grant over several resources (client::async_acquire_all) carries a fence per resource,
/// each settled as above on its own; a node is behind when any of its counters is.
///
/// A reentrant re-entry keeps the fence of the hold it enters: where a quorum of nodes report a
/// hold already numbered, the fence is the largest of theirs (the outer grant wrote it to a
/// quorum, which shares a node with ours), and nodes that numbered a new hold get it too. Fewer
/// than a quorum is no hold to enter: what they keep may be the leftover of a release that
/// missed them, and another owner may have held the lock since, with a larger fence.
class fence_settlement {
public:
    /// A new round over `nodes` nodes, with a fence for each of `resources` in every grant.
    void reset(std::size_t nodes, std::size_t resources = 1);
    /// Node `node` granted with `fences` (one per resource, counters as the script returned
    /// them); `numbered`: this grant numbered a hold (false: a reentrant hold that already had
    /// its fence).
    void record(std::size_t node, std::span<const std::int64_t> fences, bool numbered);
    /// The granting nodes that report an existing hold (granted, not numbered by this round).
    [[nodiscard]] std::size_t existing_holds(std::span<const bool> granted) const;

    /// Settles the fence over the nodes flagged in `granted`: `outer` is the fence of this
    /// client's live hold that a re-entry enters (0: none). Returns the nodes behind it, to be
    /// written back; writing_back() says whether the lease waits for them.
    std::vector<std::size_t> settle(std::span<const bool> granted, std::uint64_t outer, std::size_t quorum);
    [[nodiscard]] bool writing_back() const noexcept { return writing_back_; }
    /// The settled fence (of the first resource).
    [[nodiscard]] std::uint64_t fence() const noexcept { return fence_.empty() ? 0 : fence_.front(); }
    /// The settled fence of every resource.
    [[nodiscard]] std::span<const std::uint64_t> fences() const noexcept { return fence_; }

    enum class writeback { pending, confirmed, short_of_quorum };
    /// A write-back's answer (`raised`: the node holds our token and the fence now).
    writeback on_writeback(bool raised, std::size_t quorum);
    /// A node that granted after the fence was settled is written back too, unless it has it.
    [[nodiscard]] bool behind(std::span<const std::int64_t> node_fences) const noexcept;

private:
    [[nodiscard]] bool node_has_fence(std::size_t node) const noexcept;

    std::size_t width_ = 1;              // fences per grant: one per resource
    std::vector<std::uint64_t> fences_;  // node i's fences at [i * width_, (i + 1) * width_)
    std::vector<bool> numbered_;
    std::vector<std::uint64_t> fence_;  // the settled fence per resource
    std::size_t confirmed_ = 0;         // nodes known to have a counter >= fence_ and our token
    std::size_t pending_ = 0;
    bool writing_back_ = false;
};

}  // namespace redlock::detail

#endif
