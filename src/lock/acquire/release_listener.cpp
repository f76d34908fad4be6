// SPDX-License-Identifier: BSL-1.0
#include "lock/acquire/release_listener.hpp"

#include "lock/client/client_state.hpp"
#include <redlock/resp/request.hpp>

#include <boost/asio/post.hpp>

#include <algorithm>
#include <utility>

namespace redlock::detail {

namespace asio = boost::asio;

namespace {
// fair.lua's message to a waiter it handed the lock over to: "granted <round token>".
constexpr std::string_view handoff_prefix = "granted ";
// A release after which more than one waiter may get in (a read-write lock's, a forced one).
constexpr std::string_view shared_prefix = "shared ";
// A Redlock release publishes once per node that deleted our key, all within the release's
// round trip; a second is far more than that and far less than any lock's hold time.
constexpr auto duplicate_window = std::chrono::seconds(1);
}  // namespace

release_listener::release_listener(client_state& client) : client_(client) {}

release_listener::~release_listener() {
    for (auto& s : subscribers_)
        s->close();
}

void release_listener::close() {
    closed_ = true;
    for (auto& s : subscribers_)
        s->close();
}

void release_listener::open() {
    std::weak_ptr<client_state> weak = client_.weak_from_this();
    for (std::size_t i = 0; i < client_.node_count(); ++i) {
        redis::connection_config cc = client_.link(i).subscriber_config();
        cc.scripts.clear();
        // What a subscriber connection reaches is not the voter's health: a cluster's are the
        // masters of the channels' slots, a Sentinel's may meet a failover at another moment.
        cc.on_server_info = nullptr;
        cc.on_disconnect = nullptr;  // a node's events are its voting connection's
        cc.setup_commands.clear();
        cc.on_setup_replies = nullptr;
        if (!cc.client_name.empty()) cc.client_name += ":sub";
        redis::detail::subscriber_link::callbacks cb;
        cb.on_push = [weak, i](const resp::value& v) {
            if (auto c = weak.lock()) c->listener().on_push(i, v);
        };
        // Subscribed anew (a reconnect, a slot that moved): a release meanwhile went unheard.
        cb.on_resubscribing = [weak, i](const std::vector<std::string>& channels) {
            auto c = weak.lock();
            if (!c) return;
            for (const auto& name : channels) {
                auto it = c->listener().channels_.find(name);
                if (it != c->listener().channels_.end() && i < it->second.confirmed.size())
                    it->second.confirmed[i] = false;
            }
        };
        cb.on_refused = [weak](const std::vector<std::string>& channels, const resp::value& error) {
            if (auto c = weak.lock()) c->listener().on_refused(channels, error);
        };
        subscribers_.push_back(std::make_shared<redis::detail::subscriber_link>(
            client_.strand(), std::move(cc), client_.link(i).cluster(), std::move(cb)));
        if (auto* sentinels = client_.link(i).sentinels()) subscribers_.back()->follow(*sentinels);
    }
}

std::vector<std::shared_ptr<release_waiter>> release_listener::targets(std::deque<waiter>& waiters,
                                                                       bool wake) {
    std::vector<std::shared_ptr<release_waiter>> live;
    for (auto& w : waiters) {
        if (wake && !w.woken) {
            client_.metrics().release_wakeups.fetch_add(1, std::memory_order_relaxed);
            w.woken = true;
        }
        if (auto target = w.target.lock()) live.push_back(std::move(target));
    }
    return live;
}

void release_listener::on_refused(const std::vector<std::string>& channels, const resp::value& error) {
    for (const auto& name : channels) {
        auto it = channels_.find(name);
        if (it == channels_.end()) continue;
        it->second.refusal = error.str;
        for (auto& w : targets(it->second.waiters, false))
            w->on_subscription_refused(error.str);
    }
}

release_listener::waiter_id release_listener::add(const std::string& channel,
                                                  std::weak_ptr<release_waiter> target) {
    if (closed_) return 0;
    const auto cap = client_.config().max_subscriptions;
    if (cap > 0 && channels_.size() >= cap && !channels_.contains(channel)) {
        client_.metrics().waits_unsubscribed.fetch_add(1, std::memory_order_relaxed);
        return 0;
    }
    if (subscribers_.empty()) open();
    auto [it, inserted] = channels_.try_emplace(channel);
    const auto id = next_id_++;
    if (!inserted && !it->second.refusal.empty()) {
        // Not from here: our caller is about to start the wait that the refusal would end.
        asio::post(client_.strand(), [target, why = it->second.refusal] {
            if (auto w = target.lock()) w->on_subscription_refused(why);
        });
    }
    it->second.waiters.push_back({id, std::move(target)});
    if (inserted) {
        it->second.confirmed.assign(subscribers_.size(), false);
        for (auto& s : subscribers_)
            s->subscribe({channel});
    }
    return id;
}

void release_listener::remove(const std::string& channel, waiter_id id) {
    auto it = channels_.find(channel);
    if (it == channels_.end()) return;
    auto& waiters = it->second.waiters;
    waiters.erase(
        std::remove_if(waiters.begin(), waiters.end(), [id](const waiter& w) { return w.id == id; }),
        waiters.end());
    if (waiters.empty()) {
        channels_.erase(it);
        for (auto& s : subscribers_)
            s->unsubscribe({channel});
    }
}

void release_listener::on_subscribed(std::size_t node, const std::string& channel) {
    auto it = channels_.find(channel);
    if (it == channels_.end()) return;
    auto& confirmed = it->second.confirmed;
    if (node >= confirmed.size() || confirmed[node]) return;
    confirmed[node] = true;
    if (std::find(confirmed.begin(), confirmed.end(), false) != confirmed.end()) return;
    // As for a release: one waiter, the oldest not woken yet. If a release went unheard, the
    // lock is free and one try takes it; that holder's release wakes the next.
    for (auto& w : it->second.waiters) {
        if (w.woken) continue;
        if (auto target = w.target.lock()) target->on_subscribed();
        return;
    }
}

void release_listener::on_push(std::size_t node, const resp::value& v) {
    // ["smessage", channel, payload] or ["ssubscribe", channel, count]; unsubscribe
    // confirmations are not for us.
    if (v.elements.size() != 3) return;
    if (v.elements[0].str == "ssubscribe") {
        on_subscribed(node, v.elements[1].str);
        return;
    }
    if (v.elements[0].str != "smessage") return;
    auto it = channels_.find(v.elements[1].str);
    if (it == channels_.end()) return;
    auto& state = it->second;
    const auto& payload = v.elements[2].str;
    if (payload.starts_with(handoff_prefix)) {
        const auto round_token = std::string_view(payload).substr(handoff_prefix.size());
        for (auto& w : targets(state.waiters, true))
            w->on_handoff(node, round_token);
        return;
    }
    const auto now = std::chrono::steady_clock::now();
    while (!state.recent.empty() && now - state.recent.front().second > duplicate_window) {
        state.recent_payloads.erase(state.recent.front().first);
        state.recent.pop_front();
    }
    if (!state.recent_payloads.insert(payload).second) return;
    state.recent.emplace_back(payload, now);
    if (payload.starts_with(shared_prefix)) {
        // Every waiter not woken yet; called once the list is walked, as a woken waiter may
        // leave (and change the list) at once.
        std::vector<std::shared_ptr<release_waiter>> woken;
        for (auto& w : state.waiters) {
            if (w.woken) continue;
            w.woken = true;
            client_.metrics().release_wakeups.fetch_add(1, std::memory_order_relaxed);
            if (auto target = w.target.lock()) woken.push_back(std::move(target));
        }
        for (auto& target : woken)
            target->on_released();
        return;
    }
    // The oldest waiter not yet woken. It stays registered (and the channel subscribed) until it
    // leaves: if its try fails it waits again, with no gap in the subscription.
    for (auto& w : state.waiters) {
        if (w.woken) continue;
        w.woken = true;
        client_.metrics().release_wakeups.fetch_add(1, std::memory_order_relaxed);
        if (auto target = w.target.lock()) target->on_released();
        return;
    }
}

void listener_registration::move_to(release_listener& listener, const std::string& channel,
                                    std::weak_ptr<release_waiter> waiter) {
    const auto previous = id_;
    id_ = listener.add(channel, std::move(waiter));
    if (previous != 0) listener.remove(*channel_, previous);
    channel_ = &channel;
}

void listener_registration::drop(release_listener& listener) {
    if (id_ != 0) listener.remove(*channel_, std::exchange(id_, 0));
}

}  // namespace redlock::detail
