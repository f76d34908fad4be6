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
#include <string_view>
#include <unordered_map>
#include <vector>

namespace redlock::detail {

class client_state;

/// fair.lua's message to a waiter it handed the lock over to: "granted <round token>".
inline constexpr std::string_view handoff_prefix = "granted ";
/// Not a message: what the oldest waiter of a channel not woken yet is told once every node has
/// confirmed the channel's subscription (again, after a reconnect). A waiter's round may have
/// run on a node before the SUBSCRIBE did, which goes on another connection, and a release in
/// between was not heard: if the waiter sleeps, it tries once more.
inline constexpr std::string_view subscribed_notice = "subscribed";
/// Not a message: a node refused the channel's SUBSCRIBE (an ACL without `+subscribe` or the
/// channel): "refused <the server's error>". No release will be heard from that node: the
/// waiter polls. Told once per refusal, with no reconnect (the connection goes on).
inline constexpr std::string_view refused_prefix = "refused ";

/// The pub/sub side of waiting: one subscriber connection per node, opened on the first wait and
/// shared by every waiter and channel of the client (no connection per waiter). A channel is
/// subscribed while it has waiters and unsubscribed when the last one leaves. A release message
/// wakes the oldest waiter of its channel, one per release: the same release published by
/// several nodes of a Redlock (same payload, within a second) wakes nobody else. A hand-off
/// ("granted <round token>", on a fair waiter's own channel) is the lock itself, one per node:
/// every one of them reaches the channel's waiter.
/// Strand only; the connections share the client's strand.
class release_listener {
public:
    using waiter_id = std::uint64_t;
    /// A message for a waiter: the node it came from, and its payload.
    using message_handler = std::function<void(std::size_t node, std::string_view payload)>;

    explicit release_listener(client_state& client);
    ~release_listener();
    release_listener(const release_listener&) = delete;
    release_listener& operator=(const release_listener&) = delete;

    /// Registers a waiter; `on_message` runs on the strand, for one release at most (and for
    /// every hand-off). The waiter stays registered, and its channel subscribed, until remove():
    /// a waiter whose try fails registers again before it removes its old registration, so the
    /// subscription has no gap.
    /// Returns 0, registering nothing, when the channel is new and client_config's
    /// max_subscriptions channels are subscribed already: that waiter polls instead.
    waiter_id add(const std::string& channel, message_handler on_message);
    /// The server's error if a node refused the channel's subscription (see refused_prefix),
    /// else null: a waiter that registers on such a channel hears no message of that refusal.
    [[nodiscard]] const std::string* refusal(const std::string& channel) const;
    /// Forgets a waiter (it acquired, gave up or was cancelled); unsubscribes an empty channel.
    void remove(const std::string& channel, waiter_id id);

    /// A push from a subscriber connection (a message, or a (un)subscribe confirmation).
    void on_push(std::size_t node, const resp::value& v);

private:
    struct waiter {
        waiter_id id;
        message_handler on_message;
        bool woken = false;
    };
    struct channel_state {
        std::deque<waiter> waiters;
        std::deque<std::pair<std::string, std::chrono::steady_clock::time_point>> recent;
        std::vector<bool> confirmed;  // per node: its subscription is in place
        std::string refusal;          // a node refused it: the server's error
    };

    void open();
    void send(std::size_t node, const char* command, const std::vector<std::string>& channels);
    void send_to_all(const char* command, const std::vector<std::string>& channels);
    void on_subscribed(std::size_t node, const std::string& channel);
    void on_refused(std::size_t node, const std::vector<std::string>& channels, const resp::value& error);

    client_state& client_;
    std::vector<std::unique_ptr<redis::connection>> connections_;
    std::unordered_map<std::string, channel_state> channels_;
    waiter_id next_id_ = 1;
};

}  // namespace redlock::detail

#endif
