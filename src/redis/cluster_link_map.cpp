// SPDX-License-Identifier: BSL-1.0
// cluster_link's slot map and connections: reading the map (CLUSTER SHARDS, or SLOTS), keeping it
// current, the connection to each master, and what the link reports of them. Its requests and
// their redirects are in cluster_link.cpp.
#include "redis/cluster_link.hpp"
#include "redis/cluster_shards.hpp"
#include <redlock/error.hpp>

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/execution/context.hpp>
#include <boost/asio/query.hpp>

#include <algorithm>
#include <cctype>
#include <optional>
#include <utility>

namespace redlock::redis::detail {

namespace {

using clock = std::chrono::steady_clock;

// How soon a map that could not be read is asked for again.
constexpr std::chrono::milliseconds unknown_map_retry{250};
// The shortest time between two reads of the map.
constexpr std::chrono::milliseconds min_refresh_gap{100};
// How long a closed connection to a node gone from the map is kept: the handlers of the requests
// its close() ended have all run by then.
constexpr std::chrono::seconds gone_kept{60};

// A server older than 7.0 does not know CLUSTER SHARDS; an ACL may allow CLUSTER SLOTS only.
bool lacks_cluster_shards(const resp::value& reply) {
    if (!reply.is_error()) return false;
    if (reply.error_code() == "NOPERM") return true;
    std::string text = reply.str;
    std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
    return text.find("unknown subcommand") != std::string::npos;
}

}  // namespace

void cluster_link::start() {
    call_on_shutdown(boost::asio::query(strand_, boost::asio::execution::context), weak_from_this());
    for (const auto& seed : seeds_)
        connection_to(seed);
    refresh();
}

void cluster_link::refresh() {
    if (closed_) return;
    if (refreshing_) {
        refresh_again_ = true;
        return;
    }
    // Every failed request asks for a refresh: while a master is down, one read per
    // min_refresh_gap at most, not one per request.
    const auto now = clock::now();
    if (now < last_refresh_ + min_refresh_gap) {
        if (!refresh_soon_) arm_refresh_timer(last_refresh_ + min_refresh_gap - now);
        return;
    }
    refreshing_ = true;
    refresh_soon_ = false;
    last_refresh_ = now;
    // The masters first (they know the latest map), then the seeds.
    std::vector<node_address> candidates = map_.masters();
    for (const auto& seed : seeds_) {
        const bool known = std::any_of(candidates.begin(), candidates.end(), [&](const node_address& a) {
            return a.host == seed.host && a.port == seed.port;
        });
        if (!known) candidates.push_back(seed);
    }
    // Those connected first: a master that died (the likely reason for this refresh) would hold
    // the map up for a connect timeout.
    std::stable_partition(candidates.begin(), candidates.end(),
                          [this](const node_address& a) { return connected_to(a); });
    read_map_from(0, std::move(candidates), std::nullopt);
}

void cluster_link::read_map_from(std::size_t candidate, std::vector<node_address> candidates,
                                 std::optional<slot_map> best) {
    if (closed_) return;
    // Once some node gave a map, one that is not connected (maybe dead) cannot hold up its use
    // for a connect timeout.
    while (best && candidate < candidates.size() && !connected_to(candidates[candidate]))
        ++candidate;
    if (candidate >= candidates.size()) {
        // A map that serves only some slots (a failover under way) is the best there is; an
        // empty one never (a node that never joined the cluster knows nothing).
        if (best) return map_read(std::move(*best));
        refreshing_ = false;
        arm_refresh_timer();
        // No newer map: the requests that waited for one go by the old map.
        if (map_known_) reroute_parked();
        return;
    }
    auto& c = connection_to(candidates[candidate]);
    resp::request req;
    req.push("CLUSTER", shards_refused_ ? "SLOTS" : "SHARDS");
    c.async_exec(
        req, c.config().connect_timeout,
        boost::asio::bind_executor(
            strand_,
            [weak = weak_from_this(), candidate, candidates = std::move(candidates), best = std::move(best),
             from = &c](error_code ec, std::vector<resp::value> replies) mutable {
                const auto self = weak.lock();
                if (!self) return;
                std::string why;
                slot_map map;
                if (!ec && replies.size() != 1) ec = error::unexpected_reply;
                if (!ec && !self->shards_refused_ && lacks_cluster_shards(replies.front())) {
                    self->shards_refused_ = true;
                    return self->read_map_from(candidate, std::move(candidates), std::move(best));
                }
                const auto read = self->shards_refused_ ? read_cluster_slots : read_cluster_shards;
                if (!ec) ec = read(replies.front(), from->config().address, map, why, self->remap_);
                if (ec) {
                    const auto last = from->last_error();
                    auto text = "reading the slot map from " + endpoint(from->config().address) + ": " +
                                (why.empty() ? ec.message() : why);
                    if (last.code && !from->is_connected()) text += " (" + last.message + ")";
                    self->set_last_error({ec, std::move(text)});
                    return self->read_map_from(candidate + 1, std::move(candidates), std::move(best));
                }
                if (map.unserved() == 0) return self->map_read(std::move(map));
                // Partial or empty: another node may know the whole map.
                if (!map.empty() && (!best || map.unserved() < best->unserved())) best = std::move(map);
                self->read_map_from(candidate + 1, std::move(candidates), std::move(best));
            }));
}

void cluster_link::new_master(const node_address& address) {
    if (!on_new_master_) return;
    const auto c = connections_.find(endpoint(address));
    on_new_master_(address, c != connections_.end() ? c->second.get() : nullptr);
}

void cluster_link::map_read(slot_map map) {
    // A partial map (read while a failover was under way, or from a node that lags) makes
    // nobody new when the next whole map names its missing masters again (master_reference).
    for (const auto& m : reference_.on_map(map, map_))
        new_master(m);
    {
        std::lock_guard lock(status_mutex_);
        map_ = std::move(map);
        master_connections_.clear();
        map_known_ = true;
        last_error_ = {};
        ++stats_.refreshes;
        stats_.masters = map_.masters().size();
    }
    refreshing_ = false;
    close_gone_nodes();
    for (const auto& m : map_.masters())
        connection_to(m);
    reroute_parked();
    if (std::exchange(refresh_again_, false)) return refresh();
    arm_refresh_timer();
}

void cluster_link::arm_refresh_timer(std::optional<clock::duration> after) {
    if (closed_) return;
    refresh_soon_ = after.has_value();
    refresh_timer_.expires_after(after ? *after : map_known_ ? refresh_interval : unknown_map_retry);
    refresh_timer_.async_wait([weak = weak_from_this()](error_code ec) {
        if (ec) return;
        if (auto self = weak.lock()) self->refresh();
    });
}

connection& cluster_link::master_connection(std::size_t master) {
    if (master >= master_connections_.size()) master_connections_.resize(map_.masters().size(), nullptr);
    auto& cached = master_connections_[master];
    if (!cached) cached = &connection_to(map_.masters()[master]);
    return *cached;
}

connection& cluster_link::connection_to(const node_address& address) {
    const auto name = endpoint(address);
    if (auto it = connections_.find(name); it != connections_.end()) return *it->second;
    auto fresh = std::make_unique<connection>(strand_, make_config_(address));
    fresh->async_connect([](error_code) {});
    std::lock_guard lock(status_mutex_);
    auto& made = *connections_.emplace(name, std::move(fresh)).first->second;
    stats_.connections = connections_.size();
    return made;
}

void cluster_link::close_gone_nodes() {
    const auto now = clock::now();
    std::erase_if(gone_, [&](const auto& g) { return now - g.first > gone_kept; });
    for (auto it = connections_.begin(); it != connections_.end();) {
        const auto& address = it->second->config().address;
        const bool seed = std::any_of(seeds_.begin(), seeds_.end(), [&](const node_address& a) {
            return a.host == address.host && a.port == address.port;
        });
        if (seed || map_.has_master(address)) {
            ++it;
            continue;
        }
        // A master failed over or removed: a dead one would be dialled again forever. Its
        // requests end with connection_closed at once; their handlers may still name it, so
        // it is kept a while.
        it->second->close();
        gone_.emplace_back(now, std::move(it->second));
        std::lock_guard lock(status_mutex_);
        it = connections_.erase(it);
        stats_.connections = connections_.size();
    }
}

void cluster_link::set_last_error(connection_error e) {
    std::lock_guard lock(status_mutex_);
    last_error_ = std::move(e);
}

void cluster_link::count(std::uint64_t& counter) {
    std::lock_guard lock(status_mutex_);
    ++counter;
}

connection* cluster_link::master_for(std::uint16_t slot) {
    const auto master = map_known_ ? map_.master_of(slot) : std::nullopt;
    return master ? &master_connection(*master) : nullptr;
}

const node_address* cluster_link::master_address(std::uint16_t slot) const {
    const auto master = map_known_ ? map_.master_of(slot) : std::nullopt;
    return master ? &map_.masters()[*master] : nullptr;
}

bool cluster_link::is_connected() const {
    std::lock_guard lock(status_mutex_);
    if (!map_known_) return false;
    return std::all_of(map_.masters().begin(), map_.masters().end(),
                       [this](const node_address& m) { return connected_to(m); });
}

bool cluster_link::connected_to(const node_address& address) const {
    const auto it = connections_.find(endpoint(address));
    return it != connections_.end() && it->second->is_connected();
}

connection_error cluster_link::last_error() const {
    std::lock_guard lock(status_mutex_);
    if (last_error_.code) return last_error_;
    for (const auto& m : map_.masters()) {
        const auto it = connections_.find(endpoint(m));
        if (it != connections_.end() && !it->second->is_connected()) {
            auto e = it->second->last_error();
            if (e.code) return e;
        }
    }
    return {};
}

cluster_stats cluster_link::stats() const {
    std::lock_guard lock(status_mutex_);
    return stats_;
}

}  // namespace redlock::redis::detail
