// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_TEST_SUPPORT_COMMA_LIST_HPP
#define REDLOCK_TEST_SUPPORT_COMMA_LIST_HPP

#include <redlock/redis/node_spec.hpp>

#include <string>
#include <vector>

namespace redlock::test {

/// "a,b,,c" -> {"a", "b", "c"}: the node lists the tests pass to their child processes.
inline std::vector<std::string> split_commas(const std::string& s) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start <= s.size()) {
        auto comma = s.find(',', start);
        if (comma == std::string::npos) comma = s.size();
        if (comma > start) out.push_back(s.substr(start, comma - start));
        start = comma + 1;
    }
    return out;
}

/// A node list split into URIs, as the redlock command does (redis::split_node_list).
inline std::vector<std::string> split_node_uris(const std::string& s) {
    return redis::split_node_list(s);
}

}  // namespace redlock::test

#endif
