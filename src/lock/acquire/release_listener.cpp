// SPDX-License-Identifier: BSL-1.0
#include "lock/acquire/release_listener.hpp"

#include "lock/client/client_state.hpp"
#include "scripts/scripts_gen.hpp"
#include <redlock/resp/request.hpp>

#include <boost/asio/post.hpp>

#include <algorithm>
#include <array>
#include <cstdio>
#include <random>
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
// How often the lingering channels and the listings' leases are looked at.
constexpr auto sweep_period = std::chrono::milliseconds(250);

// Unique among the clients of a resource, not secret: a name in the lists and the messages.
std::string client_list_id(std::mt19937_64& rng) {
    std::array<char, 33> text{};
    std::snprintf(text.data(), text.size(), "%016llx%016llx", static_cast<unsigned long long>(rng()),
                  static_cast<unsigned long long>(rng()));
    return std::string(text.data(), 32);
}
}  // namespace

release_listener::release_listener(client_state& client)
    : client_(client), id_(client_list_id(client.rng())) {}

release_listener::~release_listener() {
    for (auto& s : subscribers_)
        s->close();
}

void release_listener::close() {
    closed_ = true;
    if (sweep_timer_) sweep_timer_->cancel();
    for (auto& s : subscribers_)
        s->close();
}

void release_listener::leave_all() {
    for (auto& [name, state] : channels_)
        if (state.joined) unlist(name, state, {});
}

void release_listener::list(const std::string& channel, channel_state& state) {
    state.joined = true;
    state.listed_until = clock::now() + listing_lease;
    const auto lease_ms = std::to_string(std::chrono::milliseconds(listing_lease).count());
    const std::array<std::string_view, 1> keys{channel};
    const std::array<std::string_view, 3> args{id_, "join", lease_ms};
    for (std::size_t i = 0; i < client_.node_count(); ++i)
        client_.eval_on(i, scripts::listen, keys, args, client_.background_timeout(), nullptr);
}

void release_listener::unlist(const std::string& channel, channel_state& state, const std::string& token) {
    state.joined = false;
    const std::array<std::string_view, 1> keys{channel};
    // "leave", or "pass" with the token of the release that named us.
    const std::array<std::string_view, 3> words{id_, token.empty() ? "leave" : "pass", token};
    const std::span<const std::string_view> args(words.data(), token.empty() ? 2 : 3);
    std::weak_ptr<client_state> weak = client_.weak_from_this();
    for (std::size_t i = 0; i < client_.node_count(); ++i) {
        ++state.unlistings;
        client_.eval_on(i, scripts::listen, keys, args, client_.background_timeout(),
                        [weak, channel](boost::system::error_code, resp::value) {
                            auto c = weak.lock();
                            if (!c) return;
                            auto& channels = c->listener().channels_;
                            if (auto it = channels.find(channel);
                                it != channels.end() && it->second.unlistings > 0)
                                --it->second.unlistings;
                        });
    }
}

void release_listener::named(const std::string& channel, channel_state& state, const std::string& token) {
    state.named_token = token;
    for (auto& w : state.waiters) {
        if (w.woken) continue;
        w.woken = true;
        w.named = true;
        client_.metrics().release_wakeups.fetch_add(1, std::memory_order_relaxed);
        if (auto target = w.target.lock()) {
            target->on_released();
            return;
        }
    }
    // Every waiter of ours is on its way: one tries once more if its try fails.
    for (auto& w : state.waiters) {
        if (auto target = w.target.lock()) {
            target->on_released();
            return;
        }
    }
    // Nobody of ours waits any more: another client is named in our stead.
    unlist(channel, state, token);
}

void release_listener::arm_sweep() {
    if (sweep_armed_ || closed_) return;
    sweep_armed_ = true;
    if (!sweep_timer_) sweep_timer_.emplace(client_.strand());
    sweep_timer_->expires_after(sweep_period);
    sweep_timer_->async_wait([weak = client_.weak_from_this()](boost::system::error_code ec) {
        if (ec) return;
        if (auto c = weak.lock()) c->listener().sweep();
    });
}

void release_listener::sweep() {
    sweep_armed_ = false;
    if (closed_) return;
    const auto now = clock::now();
    // Beyond max_lingering, lingering channels go before their time.
    const auto lingering = static_cast<std::size_t>(std::count_if(
        channels_.begin(), channels_.end(), [](const auto& c) { return c.second.waiters.empty(); }));
    std::size_t excess = lingering > max_lingering ? lingering - max_lingering : 0;
    for (auto it = channels_.begin(); it != channels_.end();) {
        auto& state = it->second;
        if (state.waiters.empty()) {
            if (state.unlistings == 0 && (excess > 0 || now - state.idle_since >= linger)) {
                if (excess > 0) --excess;
                it = unsubscribe(it);
                continue;
            }
        } else if (state.joined && state.listed_until - now < listing_lease / 3) {
            list(it->first, state);
        }
        ++it;
    }
    if (!channels_.empty()) arm_sweep();
}

std::vector<std::string> release_listener::subscriptions(const std::string& channel, bool listed) const {
    if (!listed) return {channel};
    return {channel, channel + ':' + id_};
}

std::unordered_map<std::string, release_listener::channel_state>::iterator release_listener::unsubscribe(
    std::unordered_map<std::string, channel_state>::iterator it) {
    for (auto& s : subscribers_)
        s->unsubscribe(subscriptions(it->first, it->second.listed));
    return channels_.erase(it);
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

release_listener::waiter_id release_listener::add(const std::string& channel, bool listed,
                                                  std::weak_ptr<release_waiter> target) {
    if (closed_) return 0;
    const auto cap = client_.config().max_subscriptions;
    if (cap > 0 && channels_.size() >= cap && !channels_.contains(channel)) {
        // A lingering channel makes room; one with waiters does not.
        auto idle = std::find_if(channels_.begin(), channels_.end(), [](const auto& c) {
            return c.second.waiters.empty() && c.second.unlistings == 0;
        });
        if (idle == channels_.end()) {
            client_.metrics().waits_unsubscribed.fetch_add(1, std::memory_order_relaxed);
            return 0;
        }
        unsubscribe(idle);
    }
    if (subscribers_.empty()) open();
    auto [it, inserted] = channels_.try_emplace(channel);
    auto& state = it->second;
    const auto id = next_id_++;
    if (!inserted && !state.refusal.empty()) {
        // Not from here: our caller is about to start the wait that the refusal would end.
        asio::post(client_.strand(), [target, why = state.refusal] {
            if (auto w = target.lock()) w->on_subscription_refused(why);
        });
    }
    state.waiters.push_back({id, std::move(target)});
    if (inserted) {
        state.listed = listed;
        state.confirmed.assign(subscribers_.size(), false);
        for (auto& s : subscribers_)
            s->subscribe(subscriptions(channel, listed));
        arm_sweep();
    }
    // Listed again after a linger (its "leave" went first on the same connections), or renewed
    // early by a new waiter rather than late by the sweep.
    if (state.listed && (!state.joined || state.listed_until - clock::now() < listing_lease / 2))
        list(channel, state);
    return id;
}

void release_listener::remove(const std::string& channel, waiter_id id, leaving how) {
    auto it = channels_.find(channel);
    if (it == channels_.end()) return;
    auto& state = it->second;
    auto& waiters = state.waiters;
    const auto gone =
        std::find_if(waiters.begin(), waiters.end(), [id](const waiter& w) { return w.id == id; });
    if (gone == waiters.end()) return;
    const bool hand_on = how == leaving::without_trying && gone->named;
    waiters.erase(gone);
    // A release named us and woke that waiter, which leaves without trying: the next one of
    // ours takes the wake, or another client.
    if (hand_on && state.joined) named(channel, state, state.named_token);
    if (!waiters.empty()) return;
    if (!state.listed) {
        // A fair waiter's own channel: nobody else will wait on it.
        unsubscribe(it);
        return;
    }
    if (state.joined) unlist(channel, state, {});
    state.idle_since = clock::now();
    arm_sweep();
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
    // A release that names us comes on our own channel, "<channel>:<our id>".
    const auto& name = v.elements[1].str;
    const bool own =
        name.size() > id_.size() + 1 && name.ends_with(id_) && name[name.size() - id_.size() - 1] == ':';
    auto it = channels_.find(own ? name.substr(0, name.size() - id_.size() - 1) : name);
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
    // "<token> <client id>": a release that names the one client it wakes.
    if (const auto space = payload.find(' '); space != std::string::npos) {
        if (std::string_view(payload).substr(space + 1) == id_)
            named(it->first, state, payload.substr(0, space));
        return;
    }
    // A release that names nobody: the oldest waiter not yet woken. It stays registered (and the
    // channel subscribed) until it leaves: if its try fails it waits again, with no gap in the
    // subscription.
    for (auto& w : state.waiters) {
        if (w.woken) continue;
        w.woken = true;
        client_.metrics().release_wakeups.fetch_add(1, std::memory_order_relaxed);
        if (auto target = w.target.lock()) target->on_released();
        return;
    }
}

void listener_registration::move_to(release_listener& listener, const std::string& channel, bool listed,
                                    std::weak_ptr<release_waiter> waiter) {
    const auto previous = id_;
    id_ = listener.add(channel, listed, std::move(waiter));
    if (previous != 0) listener.remove(*channel_, previous);
    channel_ = &channel;
}

void listener_registration::drop(release_listener& listener, release_listener::leaving how) {
    if (id_ != 0) listener.remove(*channel_, std::exchange(id_, 0), how);
}

}  // namespace redlock::detail
