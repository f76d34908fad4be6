// SPDX-License-Identifier: BSL-1.0
// identity_of: the inverse of make_token(identity) (lock/token.hpp), for operators.
#include <redlock/inspection.hpp>

#include <charconv>
#include <cstddef>

namespace redlock {

namespace {

constexpr std::size_t random_digits = 32;  // make_token(): 128 bits as hex

int hex_value(char c) noexcept {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

}  // namespace

std::optional<holder_identity> identity_of(std::string_view holder) {
    for (std::size_t i = 0; i < random_digits; ++i)
        if (i >= holder.size() || hex_value(holder[i]) < 0) return std::nullopt;
    if (holder.size() <= random_digits || holder[random_digits] != 'x') return std::nullopt;
    std::string text;
    std::size_t at = random_digits + 1;
    // The identity ends where the hex digits do: a fair lock's value goes on with ".<round>".
    for (; at + 1 < holder.size() && hex_value(holder[at]) >= 0 && hex_value(holder[at + 1]) >= 0; at += 2)
        text += static_cast<char>(hex_value(holder[at]) * 16 + hex_value(holder[at + 1]));
    if (at < holder.size() && hex_value(holder[at]) >= 0) return std::nullopt;  // an odd digit out
    const auto first = text.find('\n');
    const auto second = first == std::string::npos ? first : text.find('\n', first + 1);
    if (second == std::string::npos) return std::nullopt;
    holder_identity out;
    out.host = text.substr(0, first);
    const auto pid = std::string_view(text).substr(first + 1, second - first - 1);
    const auto parsed = std::from_chars(pid.data(), pid.data() + pid.size(), out.pid);
    if (pid.empty() || parsed.ec != std::errc{} || parsed.ptr != pid.data() + pid.size()) return std::nullopt;
    out.label = text.substr(second + 1);
    return out;
}

}  // namespace redlock
