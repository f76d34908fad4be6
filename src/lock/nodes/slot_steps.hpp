// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_LOCK_NODES_SLOT_STEPS_HPP
#define REDLOCK_LOCK_NODES_SLOT_STEPS_HPP

#include <redlock/resp/value.hpp>

#include <boost/system/error_code.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace redlock::detail {

/// How the replies of a call split by slot make the one reply of the whole call, in the shape
/// its script gives on a single server (the multi_*.lua scripts).
enum class step_merge : std::uint8_t {
    acquire_plain,   ///< every step {1, 0}: {1, 0}; a step's {0, pttl, i}: that, i renumbered
    acquire_fenced,  ///< every step {1, f...}: {1, every f in the whole call's order}
    release,         ///< every step runs; 1 if every one answered 1, else 0
    all_ones,        ///< stops at the first that does not answer 1, whose answer it is
    shortest_hold,   ///< stops at the first 0; else the least ms left, -1 if none expires
};

/// Whether an acquire step's reply is a grant ({1, ...}, integers): one definition for the fold
/// and for judging the server that made it.
[[nodiscard]] bool is_step_grant(const resp::value& reply);

/// A Redis Cluster holds the resources of a lock over several of them on several slots, and a
/// script may only touch keys of one slot: there a call runs as one step per slot, one after
/// another, in the order of their slots. This folds the steps' replies, one at a time, into the
/// whole call's reply. An acquire stops at the first step that is refused or fails, and names
/// the steps before it, which granted, to be undone (released, and announced: a waiter that
/// they refused meanwhile is woken): two acquisitions never keep part of what the other asks,
/// and both take the slots in one order. No I/O.
class step_fold {
public:
    /// `members[s]`: for step s, the index in the whole call's resources of each of its own.
    step_fold(step_merge merge, std::vector<std::vector<std::size_t>> members);

    /// Step `step`'s failure `ec` or reply; true: send the next step.
    bool add(std::size_t step, boost::system::error_code ec, const resp::value& reply);

    /// Once add() said to stop, or after the last step: the whole call's failure or reply.
    [[nodiscard]] boost::system::error_code error() const noexcept { return ec_; }
    [[nodiscard]] resp::value reply() const;
    /// An acquire's steps that granted before one that did not, to be released; 0 when
    /// it was granted everywhere.
    [[nodiscard]] std::size_t granted_to_undo() const noexcept { return undo_; }

private:
    bool add_acquire(std::size_t step, const resp::value& reply);

    step_merge merge_;
    std::vector<std::vector<std::size_t>> members_;
    boost::system::error_code ec_;
    resp::value last_;  // the reply that ended it early, passed on as it is
    bool ended_early_ = false;
    bool all_ones_ = true;              // release
    std::int64_t shortest_ = -1;        // shortest_hold
    std::vector<std::int64_t> fences_;  // acquire_fenced, in the whole call's order
    std::size_t undo_ = 0;
};

}  // namespace redlock::detail

#endif
