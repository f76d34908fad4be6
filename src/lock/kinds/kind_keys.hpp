// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_LOCK_KINDS_KIND_KEYS_HPP
#define REDLOCK_LOCK_KINDS_KIND_KEYS_HPP

#include "lock/client/resource_keys.hpp"

#include <string>
#include <vector>

namespace redlock::detail {

/// The extra names of a fair lock (fair.lua), beside its lock key.
struct fair_queue_keys {
    std::string queue;        ///< "{...}:queue", zset of waiting tokens by ticket
    std::string deadlines;    ///< "{...}:queue:deadlines", zset of the same tokens by server time
    std::string tickets;      ///< "{...}:queue:tickets", the ticket counter
    std::string handoffs;     ///< "{...}:queue:handoffs", hash: place token -> its hand-off
    std::string wake_prefix;  ///< a waiter's channel is "{...}:wake:<token>"
};

[[nodiscard]] fair_queue_keys fair_keys_for(const resource_keys& keys);

/// The extra names of a read-write lock (rw_acquire.lua), beside its lock key: a sorted set of
/// its holders' tokens by when each hold expires.
struct read_write_keys {
    std::string modes;    ///< "{...}:rw", hash: holder token -> "<r|w> <fence> <owner>"
    std::string waiting;  ///< "{...}:rw:waiting", zset: waiting writers' tokens by when their mark lapses
};

[[nodiscard]] read_write_keys read_write_keys_for(const resource_keys& keys);

/// inspect.lua's KEYS: the lock, its fence counter, and every kind's own keys that say who
/// holds or waits, whatever kind the resource is held as.
[[nodiscard]] std::vector<std::string> inspected_keys(const resource_keys& keys);
/// force_release.lua's KEYS: the lock, its release channel, and every kind's own keys that
/// record a holder.
[[nodiscard]] std::vector<std::string> force_released_keys(const resource_keys& keys);

}  // namespace redlock::detail

#endif
