// SPDX-License-Identifier: BSL-1.0
#include "scripts/scripts_gen.hpp"
#include <redlock/fenced_set.hpp>

#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>

namespace redlock::detail {

void start_fenced_set(redis::connection& conn, std::string key, std::string fence_key, std::uint64_t fence,
                      std::string value, std::chrono::milliseconds timeout,
                      boost::asio::any_completion_handler<void(boost::system::error_code)> handler) {
    namespace asio = boost::asio;
    const auto fence_text = std::to_string(fence);
    std::string_view keys[] = {key, fence_key};
    std::string_view args[] = {fence_text, value};
    auto ex = asio::get_associated_executor(handler, conn.get_executor());
    auto slot = asio::get_associated_cancellation_slot(handler);
    conn.async_eval(
        scripts::fenced_set, keys, args, timeout,
        asio::bind_cancellation_slot(
            slot, asio::bind_executor(ex, [h = std::move(handler)](boost::system::error_code ec,
                                                                   resp::value v) mutable {
                if (!ec) {
                    if (v.is_error()) {
                        ec = error::server_error;
                    } else if (v.kind != resp::type::integer || (v.integer != 0 && v.integer != 1)) {
                        ec = error::unexpected_reply;
                    } else if (v.integer == 0) {
                        ec = error::stale_fence;
                    }
                }
                std::move(h)(ec);
            })));
}

}  // namespace redlock::detail
