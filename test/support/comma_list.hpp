#ifndef REDLOCK_TEST_SUPPORT_COMMA_LIST_HPP
#define REDLOCK_TEST_SUPPORT_COMMA_LIST_HPP

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

/// A node list split into URIs: a piece without "://" is one more seed of the cluster URI
/// before it ("redis-cluster://a:1,b:2,redis://c:3" is two nodes), as the redlock command does.
inline std::vector<std::string> split_node_uris(const std::string& s) {
    std::vector<std::string> out;
    for (auto& piece : split_commas(s)) {
        if (piece.find("://") == std::string::npos && !out.empty()) {
            out.back() += "," + piece;
        } else {
            out.push_back(std::move(piece));
        }
    }
    return out;
}

}  // namespace redlock::test

#endif
