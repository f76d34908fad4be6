#ifndef REDLOCK_RESP_REQUEST_HPP
#define REDLOCK_RESP_REQUEST_HPP

#include <charconv>
#include <concepts>
#include <cstddef>
#include <string>
#include <string_view>

namespace redlock::resp {

/// One or more commands serialized as RESP arrays of bulk strings, ready to be written.
/// Arguments are binary-safe: a `std::string_view` may hold any bytes, CR, LF and NUL included.
/// Integers are written in decimal. The commands of one request leave in one write and their
/// replies come back in order.
class request {
public:
    /// Appends the command `cmd args...`. Arguments are string-like or integral.
    template <class... Args>
    void push(std::string_view cmd, const Args&... args) {
        append_header('*', 1 + sizeof...(Args));
        append_bulk(cmd);
        (append_arg(args), ...);
        ++commands_;
    }

    /// Appends `cmd` followed by every element of `args` (a range of string-like or integral values).
    template <class Range>
    void push_range(std::string_view cmd, const Range& args) {
        std::size_t n = 0;
        for (const auto& a : args) {
            (void)a;
            ++n;
        }
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

private:
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
