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

/// "{<prefix><resource>}", the hash tag every name of the resource begins with.
[[nodiscard]] std::string resource_tag(const resource_keys& keys);

/// Longest resource name accepted: keys stay far below Redis limits and logs stay readable.
inline constexpr std::size_t max_resource_length = 1024;

}  // namespace redlock::detail

#endif
