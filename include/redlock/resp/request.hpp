// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_RESP_REQUEST_HPP
#define REDLOCK_RESP_REQUEST_HPP

#include <redlock/export.hpp>

#include <charconv>
#include <concepts>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

namespace redlock::resp {

/// One or more commands serialized as RESP arrays of bulk strings, ready to be written.
/// Arguments are binary-safe: a `std::string_view` may hold any bytes, CR, LF and NUL included.
/// Integers are written in decimal. The commands of one request leave in one write and their
/// replies come back in order.
class REDLOCK_API request {
public:
    /// Appends the command `cmd args...`. Arguments are string-like or integral.
    template <class... Args>
    void push(std::string_view cmd, const Args&... args) {
        grow_by(header_size(1 + sizeof...(Args)) + bulk_size(cmd.size()) + (arg_size(args) + ... + 0));
        append_header('*', 1 + sizeof...(Args));
        append_bulk(cmd);
        (append_arg(args), ...);
        ++commands_;
    }

    /// Appends `cmd` followed by every element of `args` (a range of string-like or integral values).
    template <class Range>
    void push_range(std::string_view cmd, const Range& args) {
        std::size_t n = 0;
        std::size_t bytes = 0;
        for (const auto& a : args) {
            ++n;
            bytes += arg_size(a);
        }
        grow_by(header_size(1 + n) + bulk_size(cmd.size()) + bytes);
        append_header('*', 1 + n);
        append_bulk(cmd);
        for (const auto& a : args)
            append_arg(a);
        ++commands_;
    }

    [[nodiscard]] std::size_t size() const noexcept { return commands_; }
    [[nodiscard]] bool empty() const noexcept { return commands_ == 0; }
    [[nodiscard]] const std::string& payload() const noexcept { return payload_; }
    void clear() noexcept {
        payload_.clear();
        commands_ = 0;
    }
    void reserve(std::size_t bytes) { payload_.reserve(bytes); }
    /// Moves the payload out (for a caller that sends it as a string of its own); the request
    /// is left empty.
    [[nodiscard]] std::string release_payload() noexcept {
        commands_ = 0;
        return std::exchange(payload_, {});
    }

private:
    // What each piece takes once encoded, so a command is appended with one allocation at most.
    static constexpr std::size_t header_size(std::size_t n) noexcept {
        std::size_t digits = 1;
        for (; n >= 10; n /= 10)
            ++digits;
        return 1 + digits + 2;
    }
    static constexpr std::size_t bulk_size(std::size_t n) noexcept { return header_size(n) + n + 2; }
    template <class T>
    static std::size_t arg_size(const T& v) noexcept {
        if constexpr (std::integral<T> && !std::same_as<T, bool> && !std::same_as<T, char>) {
            return bulk_size(20);  // at most 20 digits and a sign: a bound is enough
        } else {
            return bulk_size(std::string_view(v).size());
        }
    }
    void grow_by(std::size_t bytes) { payload_.reserve(payload_.size() + bytes); }

    void append_header(char kind, std::size_t n) {
        char buf[24];
        auto r = std::to_chars(buf, buf + sizeof buf, n);
        payload_.push_back(kind);
        payload_.append(buf, static_cast<std::size_t>(r.ptr - buf));
        payload_.append("\r\n", 2);
    }
    void append_bulk(std::string_view s) {
        append_header('$', s.size());
        payload_.append(s.data(), s.size());
        payload_.append("\r\n", 2);
    }
    template <class T>
    void append_arg(const T& v) {
        if constexpr (std::integral<T> && !std::same_as<T, bool> && !std::same_as<T, char>) {
            char buf[24];
            auto r = std::to_chars(buf, buf + sizeof buf, v);
            append_bulk(std::string_view(buf, static_cast<std::size_t>(r.ptr - buf)));
        } else {
            static_assert(std::convertible_to<const T&, std::string_view>,
                          "request arguments must be string-like or integral");
            append_bulk(std::string_view(v));
        }
    }

    std::string payload_;
    std::size_t commands_ = 0;
};

}  // namespace redlock::resp

#endif
