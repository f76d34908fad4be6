// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_LOCK_CLIENT_OPEN_WORK_HPP
#define REDLOCK_LOCK_CLIENT_OPEN_WORK_HPP

#include <boost/asio/any_completion_handler.hpp>
#include <boost/system/error_code.hpp>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <memory>
#include <vector>

namespace redlock::detail {

class acquire_op;
struct lease_state;

/// What a client has going, for client::async_close: its acquires in flight and its leases,
/// listed weakly (being listed keeps neither alive), and how far the close has got. Strand only.
class open_work {
public:
    using close_handler = boost::asio::any_completion_handler<void(boost::system::error_code)>;

    void add(const std::shared_ptr<acquire_op>& op) { acquires_.add(op); }
    void add(const std::shared_ptr<lease_state>& lease) { leases_.add(lease); }
    /// The live ones, taken off the list: a close ends each once.
    [[nodiscard]] std::vector<std::shared_ptr<acquire_op>> take_acquires() { return acquires_.take(); }
    [[nodiscard]] std::vector<std::shared_ptr<lease_state>> take_leases() { return leases_.take(); }

    /// Set by the first async_close, on the strand: nothing new starts. Read on any thread.
    std::atomic<bool> closing{false};
    /// Set once the close has released what it releases and closed the connections.
    bool closed = false;
    /// The async_close calls waiting for the close to end.
    std::vector<close_handler> close_waiters;

private:
    template <class T>
    class weak_list {
    public:
        void add(const std::shared_ptr<T>& item) {
            // The finished ones go when the list has doubled since: amortised O(1) per add.
            if (items_.size() >= prune_at_) {
                std::erase_if(items_, [](const std::weak_ptr<T>& w) { return w.expired(); });
                prune_at_ = std::max<std::size_t>(16, 2 * items_.size());
            }
            items_.push_back(item);
        }
        std::vector<std::shared_ptr<T>> take() {
            std::vector<std::shared_ptr<T>> live;
            for (auto& w : items_)
                if (auto p = w.lock()) live.push_back(std::move(p));
            items_.clear();
            prune_at_ = 16;
            return live;
        }

    private:
        std::vector<std::weak_ptr<T>> items_;
        std::size_t prune_at_ = 16;
    };
    weak_list<acquire_op> acquires_;
    weak_list<lease_state> leases_;
};

}  // namespace redlock::detail

#endif
