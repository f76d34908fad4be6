// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_RESP_VALUE_HPP
#define REDLOCK_RESP_VALUE_HPP

#include <redlock/export.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::resp {

/// The type of a parsed reply. RESP2 null bulk strings and null arrays both become `null`.
enum class type : std::uint8_t {
    null,             // RESP3 `_`, RESP2 `$-1` and `*-1`
    simple_string,    // `+`
    error,            // `-` and RESP3 blob error `!`: text in `str`
    integer,          // `:` in `integer`
    bulk_string,      // `$` in `str` (binary-safe)
    array,            // `*` in `elements`
    map,              // `%` flattened as key, value, key, value, ... in `elements`
    set,              // `~` in `elements`
    push,             // `>` in `elements` (out-of-band: pub/sub, tracking)
    double_number,    // `,` in `number`; its text in `str`
    boolean,          // `#` in `integer` (1 or 0)
    big_number,       // `(` digits in `str`
    verbatim_string,  // `=` content after the format in `str`, the 3-letter format in `format`
};

/// One parsed reply, a tree. Server errors are values of type `error`, not exceptions: the
/// first word of their text is the code (`ERR`, `NOSCRIPT`, `WRONGPASS`, ...).
struct REDLOCK_API value {
    type kind = type::null;
    std::int64_t integer = 0;
    double number = 0.0;
    std::string str;
    std::vector<value> elements;
    /// A RESP3 attribute (`|`) that preceded this value, flattened as key, value, ...
    std::vector<value> attributes;
    /// The format of a verbatim string (`txt`, `mkd`); empty for other types.
    std::string format;

    [[nodiscard]] bool is_error() const noexcept { return kind == type::error; }
    [[nodiscard]] bool is_null() const noexcept { return kind == type::null; }
    [[nodiscard]] bool is_aggregate() const noexcept {
        return kind == type::array || kind == type::map || kind == type::set || kind == type::push;
    }
    /// True for the string-like kinds: simple, bulk, verbatim, big number, error.
    [[nodiscard]] bool is_string() const noexcept {
        return kind == type::simple_string || kind == type::bulk_string || kind == type::verbatim_string ||
               kind == type::big_number || kind == type::error;
    }
    /// The code of an error reply: its first word ("NOSCRIPT", "WRONGPASS"); empty otherwise.
    [[nodiscard]] std::string_view error_code() const noexcept {
        if (kind != type::error) return {};
        std::string_view s{str};
        return s.substr(0, s.find(' '));
    }

    friend bool operator==(const value&, const value&) = default;
};

/// A short human-readable rendering for logs and test failure messages.
REDLOCK_API std::string to_string(const value& v);

}  // namespace redlock::resp

#endif
