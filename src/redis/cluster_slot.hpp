// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_REDIS_CLUSTER_SLOT_HPP
#define REDLOCK_REDIS_CLUSTER_SLOT_HPP

#include <cstdint>
#include <string_view>

namespace redlock::redis::detail {

/// How many hash slots a Redis Cluster divides its keys into.
inline constexpr std::uint16_t cluster_slots = 16384;

/// The part of `key` that Redis Cluster hashes: the text between the first '{' and the first
/// '}' after it, when there is such a '}' and the text is not empty; else the whole key.
[[nodiscard]] std::string_view hash_tag(std::string_view key) noexcept;

/// The cluster slot of `key`: CRC16 (XMODEM) of its hash_tag(), modulo cluster_slots, as
/// CLUSTER KEYSLOT answers. Keys with one hash tag share a slot: a script may take them all.
[[nodiscard]] std::uint16_t key_slot(std::string_view key) noexcept;

}  // namespace redlock::redis::detail

#endif
