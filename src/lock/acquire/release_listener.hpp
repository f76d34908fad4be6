// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_LOCK_ACQUIRE_RELEASE_LISTENER_HPP
#define REDLOCK_LOCK_ACQUIRE_RELEASE_LISTENER_HPP

#include "redis/subscriber_link.hpp"
#include <redlock/redis/connection.hpp>
#include <redlock/resp/value.hpp>

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace redlock::detail {

class client_state;

/// What wakes a waiter (an acquisition between its rounds), on the strand.
class release_waiter {
public:
    /// A release on its channel (one waiter per release).
    virtual void on_released() = 0;
    /// fair.lua handed the lock over on `node` to the waiter whose round wrote `round_token`
    /// (its message "granted <round token>"). Every waiter of the channel hears it.
    virtual void on_handoff(std::size_t node, std::string_view round_token) = 0;
    /// Every node has confirmed the channel's subscription (again, after a reconnect); told to
    /// the oldest waiter not woken yet. Its round may have run on a node before the SSUBSCRIBE
    /// did, which goes on another connection, and a release in between was not heard: if it
    /// sleeps, it tries once more.
    virtual void on_subscribed() = 0;
    /// A node refused the channel's SSUBSCRIBE (an ACL without `+ssubscribe` or the channel):
    /// no release will be heard from that node, the waiter polls. Told once per refusal, with
    /// no reconnect (the connection goes on), and to a waiter that registers after it.
    virtual void on_subscription_refused(std::string_view why) = 0;

protected:
    ~release_waiter() = default;
};

/// The pub/sub side of waiting (sharded: SSUBSCRIBE, which the scripts' SPUBLISH reaches): per
/// node one subscriber connection (a cluster: one per master, each channel on its slot's; see
/// subscriber_link), opened on the first wait and shared by every waiter and channel of the
/// client (no connection per waiter). A channel is
/// subscribed while it has waiters and unsubscribed when the last one leaves. A release message
/// wakes the oldest waiter of its channel, one per release ("shared <token>", after which more
/// than one may get in: every waiter): the same release published by
/// several nodes of a Redlock (same payload, within a second) wakes nobody else. A hand-off
/// ("granted <round token>", on a fair waiter's own channel) is the lock itself, one per node:
/// every one of them reaches the channel's waiter.
/// Strand only; the connections share the client's strand.
class release_listener {
public:
    using waiter_id = std::uint64_t;

    explicit release_listener(client_state& client);
    ~release_listener();
    release_listener(const release_listener&) = delete;
    release_listener& operator=(const release_listener&) = delete;

    /// Registers a waiter, to be woken by one release at most (and by every hand-off); a
    /// waiter gone (expired) hears nothing. The waiter stays registered, and its channel
    /// subscribed, until remove(): a waiter whose try fails registers again before it removes
    /// its old registration, so the subscription has no gap. If a node refused the channel's
    /// subscription, the waiter hears it after this call, not within it.
    /// Returns 0, registering nothing, when the channel is new and client_config's
    /// max_subscriptions channels are subscribed already: that waiter polls instead.
    waiter_id add(const std::string& channel, std::weak_ptr<release_waiter> waiter);
    /// Forgets a waiter (it acquired, gave up or was cancelled); unsubscribes an empty channel.
    void remove(const std::string& channel, waiter_id id);

    /// Closes the subscriber connections (client::async_close). A waiter that registers after
    /// it is not registered (add() returns 0) and polls.
    void close();

    /// A push from a subscriber connection (a message, or a (un)subscribe confirmation).
    void on_push(std::size_t node, const resp::value& v);

private:
    struct waiter {
        waiter_id id;
        std::weak_ptr<release_waiter> target;
        bool woken = false;
    };
    struct channel_state {
        std::deque<waiter> waiters;
        // The messages of the last duplicate_window, oldest first, and the same as a set: at a
        // few thousand releases a second, a scan of the list per message took half the client.
        std::deque<std::pair<std::string, std::chrono::steady_clock::time_point>> recent;
        std::unordered_set<std::string> recent_payloads;
        std::vector<bool> confirmed;  // per node: its subscription is in place
        std::string refusal;          // a node refused it: the server's error
    };

    void open();
    void on_subscribed(std::size_t node, const std::string& channel);
    void on_refused(const std::vector<std::string>& channels, const resp::value& error);
    // The live waiters of a channel, copied out: told, a waiter may register again or leave.
    // `wake`: they count as woken (a hand-off wakes every one).
    std::vector<std::shared_ptr<release_waiter>> targets(std::deque<waiter>& waiters, bool wake);

    client_state& client_;
    std::vector<std::shared_ptr<redis::detail::subscriber_link>> subscribers_;  // per node
    std::unordered_map<std::string, channel_state> channels_;
    waiter_id next_id_ = 1;
    bool closed_ = false;
};

/// A waiter's registration with a release_listener, on one channel at a time: moving to
/// another channel registers there first and then drops the old registration, so that the
/// subscription has no gap. Strand only.
class listener_registration {
public:
    void move_to(release_listener& listener, const std::string& channel,
                 std::weak_ptr<release_waiter> waiter);
    void drop(release_listener& listener);

private:
    release_listener::waiter_id id_ = 0;
    const std::string* channel_ = nullptr;
};

}  // namespace redlock::detail

#endif
