// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_TEST_SUPPORT_RESP_VALUES_HPP
#define REDLOCK_TEST_SUPPORT_RESP_VALUES_HPP

// Replies written out for tests of the pure pieces: what a server would answer.

#include <redlock/resp/value.hpp>

#include <cstdint>
#include <initializer_list>
#include <string>

namespace redlock::test {

inline resp::value integer_reply(std::int64_t i) {
    resp::value v;
    v.kind = resp::type::integer;
    v.integer = i;
    return v;
}

/// An array of integers: the shape of our scripts' multi-value answers.
inline resp::value integers_reply(std::initializer_list<std::int64_t> is) {
    resp::value v;
    v.kind = resp::type::array;
    for (auto i : is)
        v.elements.push_back(integer_reply(i));
    return v;
}

inline resp::value text_of(resp::type kind, std::string text) {
    resp::value v;
    v.kind = kind;
    v.str = std::move(text);
    return v;
}

inline resp::value bulk_reply(std::string text) {
    return text_of(resp::type::bulk_string, std::move(text));
}

inline resp::value error_reply(std::string text) {
    return text_of(resp::type::error, std::move(text));
}

}  // namespace redlock::test

#endif
