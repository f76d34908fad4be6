// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_RESP_FIELD_OF_HPP
#define REDLOCK_RESP_FIELD_OF_HPP

#include <redlock/resp/value.hpp>

#include <cstddef>
#include <string_view>

namespace redlock::resp {

/// The value of `field` in a reply of field, value pairs (a RESP3 map, or the RESP2 array the
/// same command gives: HELLO, CLUSTER SHARDS, SENTINEL MASTER, CONFIG GET); null if none.
[[nodiscard]] inline const value* field_of(const value& v, std::string_view field) {
    if (!v.is_aggregate()) return nullptr;
    for (std::size_t i = 0; i + 1 < v.elements.size(); i += 2)
        if (v.elements[i].str == field) return &v.elements[i + 1];
    return nullptr;
}

}  // namespace redlock::resp

#endif
