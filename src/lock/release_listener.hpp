#ifndef REDLOCK_LOCK_RELEASE_LISTENER_HPP
#define REDLOCK_LOCK_RELEASE_LISTENER_HPP

#include <redlock/redis/connection.hpp>
#include <redlock/resp/value.hpp>

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace redlock::detail {

class client_state;

/// The pub/sub side of waiting: one subscriber connection per node, opened on the first wait and
/// shared by every waiter and channel of the client (no connection per waiter). A channel is
/// subscribed while it has waiters and unsubscribed when the last one leaves. A release message
/// wakes the oldest waiter of its channel, one per release: the same release published by
/// several nodes of a Redlock (same payload, within a second) wakes nobody else.
/// Strand only; the connections share the client's strand.
class release_listener {
public:
    using waiter_id = std::uint64_t;

    explicit release_listener(client_state& client);
    ~release_listener();
    release_listener(const release_listener&) = delete;
    release_listener& operator=(const release_listener&) = delete;

    /// Registers a waiter; `wake` runs at most once, on the strand. The waiter stays registered,
    /// and its channel subscribed, until remove(): a waiter whose try fails registers again
    /// before it removes its old registration, so the subscription has no gap.
    /// Returns 0, registering nothing, when the channel is new and client_config's
    /// max_subscriptions channels are subscribed already: that waiter polls instead.
    waiter_id add(const std::string& channel, std::function<void()> wake);
    /// Forgets a waiter (it acquired, gave up or was cancelled); unsubscribes an empty channel.
    void remove(const std::string& channel, waiter_id id);

    /// A push from a subscriber connection (a message, or a (un)subscribe confirmation).
    void on_push(const resp::value& v);

private:
    struct waiter {
        waiter_id id;
        std::function<void()> wake;
    };
    struct channel_state {
        std::deque<waiter> waiters;
        std::deque<std::pair<std::string, std::chrono::steady_clock::time_point>> recent;
    };

    void open();
    void send_to_all(const char* command, const std::vector<std::string>& channels);

    client_state& client_;
    std::vector<std::unique_ptr<redis::connection>> connections_;
    std::unordered_map<std::string, channel_state> channels_;
    waiter_id next_id_ = 1;
};

}  // namespace redlock::detail

#endif
