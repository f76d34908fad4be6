// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_FENCED_SET_HPP
#define REDLOCK_FENCED_SET_HPP

#include <redlock/error.hpp>
#include <redlock/export.hpp>
#include <redlock/redis/connection.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace redlock {

namespace detail {
REDLOCK_API void start_fenced_set(
    redis::connection& conn, std::string key, std::string fence_key, std::uint64_t fence, std::string value,
    std::chrono::milliseconds timeout,
    boost::asio::any_completion_handler<void(boost::system::error_code)> handler);
}  // namespace detail

/// The protected resource's side of fencing, for a resource kept in Redis: sets `key` to
/// `value` over `conn` only if `fence` (a lease::fence()) is not lower than the highest fence
/// seen at `fence_key`, and records it there, in one script (fenced_set.lua). A holder that
/// paused past its lease, and was followed by a holder with a higher fence, is refused:
/// error::stale_fence. Other failures are the connection's (a timeout, a lost reply). Both keys
/// must live on one node (give them one hash tag on a cluster). Completion signature
/// `void(error_code)`; per-operation cancellation as for connection::async_exec.
template <class CompletionToken>
auto async_fenced_set(redis::connection& conn, std::string_view key, std::string_view fence_key,
                      std::uint64_t fence, std::string_view value, std::chrono::milliseconds timeout,
                      CompletionToken&& token) {
    return boost::asio::async_initiate<CompletionToken, void(boost::system::error_code)>(
        [&conn](auto handler, std::string k, std::string fk, std::uint64_t f, std::string v,
                std::chrono::milliseconds t) {
            detail::start_fenced_set(conn, std::move(k), std::move(fk), f, std::move(v), t,
                                     std::move(handler));
        },
        token, std::string(key), std::string(fence_key), fence, std::string(value), timeout);
}

}  // namespace redlock

#endif
