// SPDX-License-Identifier: BSL-1.0
#include <redlock/redis/server_version.hpp>

#include <charconv>
#include <system_error>
#include <utility>

namespace redlock::redis {

namespace {

// "7.0.15" is {7, 0}; nothing for text that does not start with "major.minor".
std::optional<std::pair<int, int>> major_minor(std::string_view version) noexcept {
    const char* const end = version.data() + version.size();
    int major = 0;
    int minor = 0;
    auto [dot, ec] = std::from_chars(version.data(), end, major);
    if (ec != std::errc() || dot == end || *dot != '.') return std::nullopt;
    if (std::from_chars(dot + 1, end, minor).ec != std::errc()) return std::nullopt;
    return std::pair{major, minor};
}

}  // namespace

std::optional<bool> older_than(std::string_view version, std::string_view floor) noexcept {
    const auto have = major_minor(version);
    const auto need = major_minor(floor);
    if (!have || !need) return std::nullopt;
    return *have < *need;
}

}  // namespace redlock::redis
