// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_LOCK_ACQUIRE_RELEASE_LISTENER_HPP
#define REDLOCK_LOCK_ACQUIRE_RELEASE_LISTENER_HPP

#include "redis/subscriber_link.hpp"
#include <redlock/redis/connection.hpp>
#include <redlock/resp/value.hpp>

#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
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
/// client (no connection per waiter).
///
/// One release wakes one waiter among all clients: the client lists itself on the nodes
/// (listen.lua: the sorted set at the channel's name) while it has waiters on a resource's
/// release channel, and a release names one listed client (parts/wake_one.lua), the same on
/// every node of a Redlock that lists the same clients, in a message "<token> <client id>" on that client's
/// own channel,
/// "<channel>:<client id>", which the client subscribes to with the channel: one message per
/// release, not one per client. That client wakes its oldest waiter not woken yet (or, all of
/// them being on their way, tells one to try once more). A client named that no longer waits,
/// or whose woken waiter is cancelled before it tries, passes the wake on (listen.lua "pass").
/// A listing lives for a lease that the client renews while it waits, so a crashed client is
/// named only until its lease runs out. A release that names nobody (no client listed), on the
/// channel itself, wakes the oldest waiter of every client; "shared <token>", after which more
/// than one may get in, wakes every waiter; the same payload published by several nodes of a
/// Redlock (within a second) wakes nobody else. A hand-off ("granted <round token>", on a fair
/// waiter's own channel) is the lock itself, one per node: every one of them reaches the
/// channel's waiter.
///
/// A channel whose last waiter leaves is unlisted at once but stays subscribed for a moment
/// (linger; bounded in number), so that a busy resource costs no SSUBSCRIBE per acquisition; it
/// is unsubscribed only once its unlisting is done, so every release that named the client
/// reaches it and is passed on.
/// Strand only; the connections share the client's strand.
class release_listener {
public:
    using waiter_id = std::uint64_t;
    /// How a waiter leaves: having tried since it was last woken (it acquired, or lost to
    /// someone who did, or timed out), or without trying (cancelled).
    enum class leaving { after_trying, without_trying };
    /// How long a channel stays subscribed after its last waiter left, and how many may.
    static constexpr auto linger = std::chrono::seconds(1);
    static constexpr std::size_t max_lingering = 1024;
    /// How long a listing lasts unless renewed; it is renewed while waiters remain, a third of
    /// it before it runs out.
    static constexpr auto listing_lease = std::chrono::seconds(6);

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
    /// `listed`: a resource's release channel, on which this client lists itself (not a fair
    /// waiter's own channel).
    waiter_id add(const std::string& channel, bool listed, std::weak_ptr<release_waiter> waiter);
    /// Forgets a waiter (it acquired, gave up or was cancelled); a channel left empty is
    /// unlisted and lingers. `how` without_trying: if a release that named this client woke
    /// it, the wake goes on to another waiter.
    void remove(const std::string& channel, waiter_id id, leaving how = leaving::after_trying);

    /// Unlists this client from every channel (client::async_close, before it drains the
    /// connections that carry the unlisting).
    void leave_all();
    /// Closes the subscriber connections (client::async_close). A waiter that registers after
    /// it is not registered (add() returns 0) and polls.
    void close();

    /// A push from a subscriber connection (a message, or a (un)subscribe confirmation).
    void on_push(std::size_t node, const resp::value& v);

private:
    using clock = std::chrono::steady_clock;
    struct waiter {
        waiter_id id;
        std::weak_ptr<release_waiter> target;
        bool woken = false;
        bool named = false;  // woken by a release that named this client
    };
    struct channel_state {
        std::deque<waiter> waiters;
        // The messages of the last duplicate_window, oldest first, and the same as a set: at a
        // few thousand releases a second, a scan of the list per message took half the client.
        std::deque<std::pair<std::string, std::chrono::steady_clock::time_point>> recent;
        std::unordered_set<std::string> recent_payloads;
        std::vector<bool> confirmed;       // per node: its subscription is in place
        std::string refusal;               // a node refused it: the server's error
        bool listed = false;               // a release channel: this client lists itself while it waits
        bool joined = false;               // listed now: "join" sent, no "leave" or "pass" since
        clock::time_point listed_until{};  // the listing sent last, counted from its sending
        clock::time_point idle_since{};    // the last waiter left: it lingers from then
        std::size_t unlistings = 0;        // "leave" and "pass" calls not answered yet
        std::string named_token;           // the token of the last release that named us
    };

    void open();
    // listen.lua on every node: "join" (renews the lease), "leave", or "pass" the release of
    // `token` on.
    void list(const std::string& channel, channel_state& state);
    void unlist(const std::string& channel, channel_state& state, const std::string& token);
    // A release named us: wake a waiter of ours, or pass it on.
    void named(const std::string& channel, channel_state& state, const std::string& token);
    // Periodically: renew the listings of channels with waiters, unsubscribe those lingered out.
    void arm_sweep();
    void sweep();
    // What a channel's subscription is: a listed one's also our own channel, "<channel>:<id>".
    [[nodiscard]] std::vector<std::string> subscriptions(const std::string& channel, bool listed) const;
    std::unordered_map<std::string, channel_state>::iterator unsubscribe(
        std::unordered_map<std::string, channel_state>::iterator it);
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
    std::string id_;                                        // this client's id in the lists: 32 hex digits
    std::optional<boost::asio::steady_timer> sweep_timer_;  // on the strand
    bool sweep_armed_ = false;
};

/// A waiter's registration with a release_listener, on one channel at a time: moving to
/// another channel registers there first and then drops the old registration, so that the
/// subscription has no gap. Strand only.
class listener_registration {
public:
    void move_to(release_listener& listener, const std::string& channel, bool listed,
                 std::weak_ptr<release_waiter> waiter);
    void drop(release_listener& listener,
              release_listener::leaving how = release_listener::leaving::after_trying);

private:
    release_listener::waiter_id id_ = 0;
    const std::string* channel_ = nullptr;
};

}  // namespace redlock::detail

#endif
