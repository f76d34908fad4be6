// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_REDIS_CONTEXT_SHUTDOWN_HPP
#define REDLOCK_REDIS_CONTEXT_SHUTDOWN_HPP

#include <boost/asio/execution_context.hpp>

#include <memory>

namespace redlock::redis {

/// An object that keeps completion handlers of its own, outside asio's queues (a connection's
/// queued requests). When its execution context shuts down those handlers can never run, and
/// they may own what owns the object (an operation owns the client that owns the connection):
/// it must drop them then, as asio drops the handlers it queued itself.
class context_shutdown_listener {
public:
    /// Called once, while the context shuts down (no handler of it runs any more). Never throws.
    virtual void on_context_shutdown() noexcept = 0;

protected:
    ~context_shutdown_listener() = default;
};

/// Calls `listener`'s on_context_shutdown() when `context` shuts down, if it is still alive then.
/// Any thread.
void call_on_shutdown(boost::asio::execution_context& context,
                      std::weak_ptr<context_shutdown_listener> listener);

}  // namespace redlock::redis

#endif
