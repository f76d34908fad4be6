// SPDX-License-Identifier: BSL-1.0
#include "redis/context_shutdown.hpp"

#include <algorithm>
#include <mutex>
#include <utility>
#include <vector>

namespace redlock::redis {

namespace {

// One per execution context, created by the first call_on_shutdown(); asio shuts services down
// in the reverse order of their creation, so this one runs before the context's scheduler drops
// its own handlers.
class shutdown_registry : public boost::asio::execution_context::service {
public:
    using key_type = shutdown_registry;

    explicit shutdown_registry(boost::asio::execution_context& context)
        : boost::asio::execution_context::service(context) {}

    void add(std::weak_ptr<context_shutdown_listener> listener) {
        std::scoped_lock lock(mutex_);
        // Forget the dead now and then, so that a context that outlives many listeners stays small.
        if (listeners_.size() >= 2 * live_at_last_sweep_ + 16) {
            std::erase_if(listeners_, [](const auto& l) { return l.expired(); });
            live_at_last_sweep_ = listeners_.size();
        }
        listeners_.push_back(std::move(listener));
    }

private:
    void shutdown() override {
        std::vector<std::weak_ptr<context_shutdown_listener>> listeners;
        {
            std::scoped_lock lock(mutex_);
            listeners.swap(listeners_);
        }
        for (auto& weak : listeners)
            if (auto l = weak.lock()) l->on_context_shutdown();
    }

    std::mutex mutex_;
    std::vector<std::weak_ptr<context_shutdown_listener>> listeners_;
    std::size_t live_at_last_sweep_ = 0;
};

}  // namespace

void call_on_shutdown(boost::asio::execution_context& context,
                      std::weak_ptr<context_shutdown_listener> listener) {
    boost::asio::use_service<shutdown_registry>(context).add(std::move(listener));
}

}  // namespace redlock::redis
