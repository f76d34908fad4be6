// SPDX-License-Identifier: BSL-1.0
#include "redis/script_call.hpp"

#include <redlock/resp/request.hpp>

#include <boost/container/small_vector.hpp>

#include <charconv>

namespace redlock::redis::detail {

std::string evalsha_payload(const script& s, std::span<const std::string_view> keys,
                            std::span<const std::string_view> args) {
    char numkeys[24];
    const auto end = std::to_chars(numkeys, numkeys + sizeof numkeys, keys.size()).ptr;
    // Our scripts take a dozen arguments at most: those fit on the stack.
    boost::container::small_vector<std::string_view, 16> parts;
    parts.push_back(s.sha1);
    parts.push_back(std::string_view(numkeys, static_cast<std::size_t>(end - numkeys)));
    parts.insert(parts.end(), keys.begin(), keys.end());
    parts.insert(parts.end(), args.begin(), args.end());
    resp::request req;
    req.push_range("EVALSHA", parts);
    return req.release_payload();
}

std::string eval_payload(const script& s, const std::string& evalsha) {
    // "*<n>\r\n" then "$7\r\nEVALSHA\r\n" then "$40\r\n<sha>\r\n", then the rest as it is.
    const auto header_end = evalsha.find("\r\n") + 2;
    const std::string_view head(evalsha.data(), header_end);
    const std::size_t rest = header_end + std::string_view("$7\r\nEVALSHA\r\n").size() +
                             std::string_view("$40\r\n").size() + s.sha1.size() + 2;
    std::string out;
    out.reserve(evalsha.size() + s.source.size());
    out.append(head);
    out.append("$4\r\nEVAL\r\n$");
    out.append(std::to_string(s.source.size()));
    out.append("\r\n");
    out.append(s.source);
    out.append("\r\n");
    out.append(evalsha, rest);
    return out;
}

}  // namespace redlock::redis::detail
