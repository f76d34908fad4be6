// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_LOCK_LEASE_WON_LOCK_HPP
#define REDLOCK_LOCK_LEASE_WON_LOCK_HPP

#include "lock/kinds/lock_kind.hpp"

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace redlock::detail {

/// What an acquisition that won hands to its lease.
struct won_lock {
    std::string resource;
    std::shared_ptr<const lock_kind> kind;
    std::string token;  ///< the value the lock holds
    std::uint64_t fence = 0;
    std::vector<std::uint64_t> fences;  ///< several resources, fenced: one per resource
    std::chrono::milliseconds node_timeout{0};
    std::chrono::steady_clock::time_point valid_until;
    std::size_t nodes_granted = 0;
    bool extend_now = false;  ///< taken with less than two thirds of its ttl left (a hand-off)
    /// suspended_so_far() when the round that gave valid_until started
    std::chrono::nanoseconds suspended_at_start{0};
};

}  // namespace redlock::detail

#endif
