// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_LOCK_CLIENT_EVENT_SINK_HPP
#define REDLOCK_LOCK_CLIENT_EVENT_SINK_HPP

#include <redlock/event.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>

namespace redlock::detail {

/// An event about a lease or an acquisition of `resource` (event_kind's lease kinds).
inline event resource_event(event_kind kind, std::string resource, boost::system::error_code ec = {},
                            std::string detail = {},
                            std::chrono::milliseconds duration = std::chrono::milliseconds::zero()) {
    event e;
    e.kind = kind;
    e.resource = std::move(resource);
    e.error = ec;
    e.duration = duration;
    e.detail = std::move(detail);
    return e;
}

/// Where a client's events go (client_config::on_event): posted to a strand of the client's
/// executor, so that the callback never runs inside the library's state, never twice at once,
/// and hears the events in the order they were told. Shared with the connections' callbacks,
/// which may outlive the client by a moment.
class event_sink : public std::enable_shared_from_this<event_sink> {
public:
    event_sink(const boost::asio::any_io_executor& ex, std::function<void(const event&)> callback)
        : strand_(boost::asio::make_strand(ex)), callback_(std::move(callback)) {}

    /// Whether anybody listens: the places that emit build no event otherwise.
    [[nodiscard]] bool wanted() const noexcept { return static_cast<bool>(callback_); }

    /// From any thread. Never throws: without memory to post it, the event is dropped.
    void emit(event e) const noexcept {
        if (!callback_) return;
        try {
            boost::asio::post(strand_, [self = shared_from_this(), e = std::move(e)] {
                try {
                    self->callback_(e);
                } catch (...) {
                    self->failures_.fetch_add(1, std::memory_order_relaxed);
                }
            });
        } catch (...) {
        }
    }

    [[nodiscard]] std::uint64_t failures() const noexcept {
        return failures_.load(std::memory_order_relaxed);
    }

private:
    boost::asio::strand<boost::asio::any_io_executor> strand_;
    std::function<void(const event&)> callback_;
    mutable std::atomic<std::uint64_t> failures_{0};
};

}  // namespace redlock::detail

#endif
