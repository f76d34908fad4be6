#include "redis/script_call.hpp"

#include <redlock/resp/request.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <vector>

namespace redlock::redis::detail {

std::string evalsha_payload(const script& s, std::span<const std::string_view> keys,
                            std::span<const std::string_view> args) {
    char numkeys[24];
    const auto end = std::to_chars(numkeys, numkeys + sizeof numkeys, keys.size()).ptr;
    // Our scripts take a dozen arguments at most: those fit on the stack.
    std::array<std::string_view, 16> on_stack;
    std::vector<std::string_view> on_heap;
    const std::size_t n = 2 + keys.size() + args.size();
    std::string_view* parts = on_stack.data();
    if (n > on_stack.size()) {
        on_heap.resize(n);
        parts = on_heap.data();
    }
    parts[0] = s.sha1;
    parts[1] = std::string_view(numkeys, static_cast<std::size_t>(end - numkeys));
    std::copy(keys.begin(), keys.end(), parts + 2);
    std::copy(args.begin(), args.end(), parts + 2 + keys.size());
    resp::request req;
    req.push_range("EVALSHA", std::span<const std::string_view>(parts, n));
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
