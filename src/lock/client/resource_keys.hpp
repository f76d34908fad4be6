// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_LOCK_CLIENT_RESOURCE_KEYS_HPP
#define REDLOCK_LOCK_CLIENT_RESOURCE_KEYS_HPP

#include <string>
#include <string_view>

namespace redlock::detail {

/// The Redis names of one resource. They share the hash tag `{<prefix><resource>}` so they live
/// on one cluster slot and one script may touch them all.
struct resource_keys {
    std::string lock;      ///< "{<prefix><resource>}:lock"
    std::string released;  ///< pub/sub channel "{<prefix><resource>}:released"
};

/// "{<prefix><resource>}:fence", the fence counter, from the lock key.
[[nodiscard]] std::string fence_key_for(const resource_keys& keys);

[[nodiscard]] resource_keys keys_for(std::string_view prefix, std::string_view resource);

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

/// Longest resource name accepted: keys stay far below Redis limits and logs stay readable.
inline constexpr std::size_t max_resource_length = 1024;

}  // namespace redlock::detail

#endif
