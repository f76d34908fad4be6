// SPDX-License-Identifier: BSL-1.0
#include "redis/subscriber_link.hpp"

#include "redis/cluster_slot.hpp"
#include "redis/cluster_topology.hpp"

#include <algorithm>
#include <chrono>
#include <string_view>

namespace redlock::redis::detail {

namespace {

// How soon channels a cluster refused are subscribed again: the slot map is read meanwhile.
constexpr std::chrono::milliseconds resubscribe_delay{200};
// How often a cluster's channels are checked against the slot map.
constexpr std::chrono::milliseconds reroute_interval{1000};

// Replies that name another node for the channel's slot, or a slot in the middle of a change.
bool is_cluster_redirect(const resp::value& error) {
    const std::string_view text = error.str;
    for (std::string_view kind : {"MOVED ", "ASK ", "CLUSTERDOWN", "TRYAGAIN"})
        if (text.starts_with(kind)) return true;
    return false;
}

}  // namespace

subscriber_link::subscriber_link(strand_type strand, connection_config base, cluster_link* cluster,
                                 callbacks cb)
    : strand_(std::move(strand)),
      base_(std::move(base)),
      cluster_(cluster),
      cb_(std::move(cb)),
      retry_timer_(strand_),
      reroute_timer_(strand_) {}

subscriber_link::~subscriber_link() {
    close();
}

void subscriber_link::close() {
    if (closed_) return;
    closed_ = true;
    retry_timer_.cancel();
    reroute_timer_.cancel();
    for (auto& [where, c] : connections_)
        c->close();
}

void subscriber_link::follow(sentinel_locator& sentinels) {
    sentinels.on_switch([weak = weak_from_this()](const node_address&) {
        auto self = weak.lock();
        if (!self || self->closed_) return;
        for (auto& [where, c] : self->connections_)
            c->reconnect();
    });
}

subscriber_link::place subscriber_link::place_of(const std::string& channel) const {
    if (!cluster_) return {};
    const auto* master = cluster_->master_address(key_slot(channel));
    // No map yet: the first seed, which answers MOVED if the slot is not its own.
    return endpoint(master ? *master : base_.address);
}

connection& subscriber_link::connection_at(const place& where) {
    auto& slot = connections_[where];
    if (slot) return *slot;
    auto cfg = base_;
    if (cluster_) {
        for (const auto& master : cluster_->masters())
            if (endpoint(master) == where) cfg.address = master;
    }
    std::weak_ptr<subscriber_link> weak = weak_from_this();
    cfg.on_push = [weak, where](const resp::value& v) {
        if (auto self = weak.lock()) self->on_push(where, v);
    };
    bool first = true;
    cfg.on_connect = [weak, where, first]() mutable {
        // The first handshake writes the subscriptions queued before it; later ones follow a
        // connection lost with its subscriptions.
        if (std::exchange(first, false)) return;
        if (auto self = weak.lock()) self->on_connected(where);
    };
    slot = std::make_unique<connection>(strand_, std::move(cfg));
    slot->async_connect([](error_code) {});
    return *slot;
}

void subscriber_link::send(const place& where, const char* command,
                           const std::vector<std::string>& channels) {
    if (closed_ || channels.empty()) return;
    resp::request req;
    req.push_range(command, channels);
    const bool subscribe = std::string_view(command) == "SSUBSCRIBE";
    std::function<void(const resp::value&)> on_refused;
    if (subscribe) {
        on_refused = [weak = weak_from_this(), channels](const resp::value& error) {
            if (auto self = weak.lock()) self->on_refusal(channels, error);
        };
    }
    connection_at(where).send_subscription(req, subscribe ? "ssubscribe" : "sunsubscribe", channels.size(),
                                           std::move(on_refused));
}

void subscriber_link::subscribe(const std::vector<std::string>& channels) {
    std::map<place, std::vector<std::string>> by_place;
    for (const auto& c : channels) {
        auto where = place_of(c);
        subscribed_[c] = where;
        by_place[where].push_back(c);
    }
    for (const auto& [where, list] : by_place)
        send(where, "SSUBSCRIBE", list);
    arm_reroute();
}

void subscriber_link::unsubscribe(const std::vector<std::string>& channels) {
    std::map<place, std::vector<std::string>> by_place;
    for (const auto& c : channels) {
        pending_.erase(c);
        auto it = subscribed_.find(c);
        if (it == subscribed_.end()) continue;
        by_place[it->second].push_back(c);
        subscribed_.erase(it);
    }
    for (const auto& [where, list] : by_place)
        send(where, "SUNSUBSCRIBE", list);
}

void subscriber_link::on_connected(const place& where) {
    std::vector<std::string> again;
    for (const auto& [channel, at] : subscribed_)
        if (at == where) again.push_back(channel);
    if (again.empty()) return;
    if (cb_.on_resubscribing) cb_.on_resubscribing(again);
    // A cluster's master that came back may serve other slots now.
    subscribe(again);
}

void subscriber_link::on_push(const place& where, const resp::value& push) {
    const auto& e = push.elements;
    if (e.size() == 3 && e[0].str == "sunsubscribe") {
        // Not asked for: the server dropped it (its slot moved to another node).
        auto it = subscribed_.find(e[1].str);
        if (it != subscribed_.end() && it->second == where) resubscribe_later({e[1].str});
        return;
    }
    if (cb_.on_push) cb_.on_push(push);
}

void subscriber_link::on_refusal(const std::vector<std::string>& channels, const resp::value& error) {
    if (cluster_ && is_cluster_redirect(error)) {
        resubscribe_later(channels);
        return;
    }
    if (cb_.on_refused) cb_.on_refused(channels, error);
}

void subscriber_link::resubscribe_later(const std::vector<std::string>& channels) {
    for (const auto& c : channels)
        if (subscribed_.contains(c)) pending_.insert(c);
    if (pending_.empty() || closed_) return;
    if (cluster_) cluster_->refresh();
    run_later(retry_timer_, retry_armed_, resubscribe_delay, &subscriber_link::resubscribe_pending);
}

void subscriber_link::run_later(boost::asio::steady_timer& timer, bool& armed,
                                std::chrono::milliseconds after, void (subscriber_link::*then)()) {
    if (armed) return;
    armed = true;
    timer.expires_after(after);
    timer.async_wait([weak = weak_from_this(), &armed, then](error_code ec) {
        // Cancelled only by close(); `armed` is a member of the link `weak` names.
        auto self = weak.lock();
        if (ec || !self) return;
        armed = false;
        ((*self).*then)();
    });
}

void subscriber_link::resubscribe_pending() {
    if (closed_) return;
    std::vector<std::string> again(pending_.begin(), pending_.end());
    pending_.clear();
    if (again.empty()) return;
    if (cb_.on_resubscribing) cb_.on_resubscribing(again);
    subscribe(again);
}

void subscriber_link::arm_reroute() {
    if (!cluster_ || closed_ || subscribed_.empty()) return;
    run_later(reroute_timer_, reroute_armed_, reroute_interval, &subscriber_link::reroute);
}

void subscriber_link::reroute() {
    if (closed_) return;
    std::map<place, std::vector<std::string>> leaving;
    std::vector<std::string> moving;
    for (const auto& [channel, at] : subscribed_) {
        if (pending_.contains(channel)) continue;
        if (place_of(channel) == at) continue;
        leaving[at].push_back(channel);
        moving.push_back(channel);
    }
    for (const auto& [where, list] : leaving)
        send(where, "SUNSUBSCRIBE", list);
    if (!moving.empty()) {
        if (cb_.on_resubscribing) cb_.on_resubscribing(moving);
        subscribe(moving);
    }
    // A connection that serves no channel any more (its master left the map, or lost its
    // slots) would only reconnect for nothing.
    for (auto it = connections_.begin(); it != connections_.end();) {
        const bool used = std::any_of(subscribed_.begin(), subscribed_.end(),
                                      [&](const auto& entry) { return entry.second == it->first; });
        if (used) {
            ++it;
            continue;
        }
        it->second->close();
        it = connections_.erase(it);
    }
    arm_reroute();
}

}  // namespace redlock::redis::detail
