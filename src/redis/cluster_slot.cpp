// SPDX-License-Identifier: BSL-1.0
#include "redis/cluster_slot.hpp"

#include <array>

namespace redlock::redis::detail {

namespace {

// CRC16-CCITT as Redis Cluster uses it (XMODEM: polynomial 0x1021, initial value 0, no
// reflection), one table lookup per byte.
constexpr std::array<std::uint16_t, 256> crc16_table() {
    std::array<std::uint16_t, 256> table{};
    for (unsigned byte = 0; byte < 256; ++byte) {
        auto crc = static_cast<std::uint16_t>(byte << 8);
        for (int bit = 0; bit < 8; ++bit)
            crc = static_cast<std::uint16_t>((crc & 0x8000) != 0 ? (crc << 1) ^ 0x1021 : crc << 1);
        table[byte] = crc;
    }
    return table;
}

constexpr auto table = crc16_table();

std::uint16_t crc16(std::string_view data) noexcept {
    std::uint16_t crc = 0;
    for (const char c : data) {
        const auto index = static_cast<std::uint8_t>((crc >> 8) ^ static_cast<std::uint8_t>(c));
        crc = static_cast<std::uint16_t>((crc << 8) ^ table[index]);
    }
    return crc;
}

}  // namespace

std::string_view hash_tag(std::string_view key) noexcept {
    const auto open = key.find('{');
    if (open == std::string_view::npos) return key;
    const auto close = key.find('}', open + 1);
    if (close == std::string_view::npos || close == open + 1) return key;
    return key.substr(open + 1, close - open - 1);
}

std::uint16_t key_slot(std::string_view key) noexcept {
    return static_cast<std::uint16_t>(crc16(hash_tag(key)) % cluster_slots);
}

}  // namespace redlock::redis::detail
