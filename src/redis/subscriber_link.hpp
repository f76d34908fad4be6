// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_REDIS_SUBSCRIBER_LINK_HPP
#define REDLOCK_REDIS_SUBSCRIBER_LINK_HPP

#include "redis/cluster_link.hpp"
#include "redis/sentinel_locator.hpp"
#include "redis/serial_executor.hpp"
#include <redlock/redis/connection.hpp>
#include <redlock/resp/value.hpp>

#include <boost/asio/steady_timer.hpp>

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace redlock::redis::detail {

/// One voter's side of sharded pub/sub (SSUBSCRIBE): a channel is subscribed on the server that
/// owns its slot, where SPUBLISH delivers it, and nowhere else. For a single server (or the
/// master Sentinel names) that is its one subscriber connection; for a cluster, a connection per
/// master, each channel on the master of its slot as the slot map says.
///
/// It keeps each channel subscribed until unsubscribe(): after a reconnect it subscribes again;
/// a cluster's refusal that names another node (MOVED, and the like during a failover) and a
/// slot migrated away (the server's own `sunsubscribe`) make it read the slot map again and
/// subscribe on the slot's master then; and once a second it moves the channels whose slot the
/// map gives another master (a failover away from a dead one). Every channel it subscribes anew is first told
/// to `on_resubscribing` (a release may go unheard meanwhile); the server's confirmation, like every message,
/// is a push handed to `on_push`.
///
/// Strand only; its connections use the strand given.
class subscriber_link final : public std::enable_shared_from_this<subscriber_link> {
public:
    using strand_type = serial_executor;
    struct callbacks {
        std::function<void(const resp::value&)> on_push;
        std::function<void(const std::vector<std::string>&)> on_resubscribing;
        /// A refusal that subscribing elsewhere cannot cure (an ACL's -NOPERM).
        std::function<void(const std::vector<std::string>&, const resp::value&)> on_refused;
    };

    /// `base`: the configuration of a subscriber connection (scripts and the like removed by
    /// the caller); for a cluster, the address of each master replaces its own. `cluster`:
    /// null for a single server; it must outlive this link.
    subscriber_link(strand_type strand, connection_config base, cluster_link* cluster, callbacks cb);
    /// Sentinel: the connection moves to each new master the sentinels announce, at once, as
    /// the voter's own connection does (the old master may still answer for a while).
    void follow(sentinel_locator& sentinels);
    ~subscriber_link();
    subscriber_link(const subscriber_link&) = delete;
    subscriber_link& operator=(const subscriber_link&) = delete;

    void subscribe(const std::vector<std::string>& channels);
    void unsubscribe(const std::vector<std::string>& channels);
    void close();

    /// Connections open: 1 for a server, up to the masters' count for a cluster.
    [[nodiscard]] std::size_t connections() const noexcept { return connections_.size(); }

private:
    // The connection a channel is subscribed on now: "" for a single server, else "host:port".
    using place = std::string;

    [[nodiscard]] place place_of(const std::string& channel) const;
    connection& connection_at(const place& where);
    void send(const place& where, const char* command, const std::vector<std::string>& channels);
    void on_connected(const place& where);
    void on_push(const place& where, const resp::value& push);
    void on_refusal(const std::vector<std::string>& channels, const resp::value& error);
    /// Reads the slot map again, then subscribes the channels on their slots' masters.
    void resubscribe_later(const std::vector<std::string>& channels);
    void resubscribe_pending();
    /// A cluster: every `reroute_interval`, channels whose slot has another master in the map
    /// now (a failover: the old master may be dead, and its connection never confirm them)
    /// move there, and the connections left without a channel are closed.
    void arm_reroute();
    void reroute();
    /// `then` after `after`, unless `armed` says it is due already.
    void run_later(boost::asio::steady_timer& timer, bool& armed, std::chrono::milliseconds after,
                   void (subscriber_link::*then)());

    strand_type strand_;
    connection_config base_;
    cluster_link* cluster_;
    callbacks cb_;
    std::map<place, std::unique_ptr<connection>> connections_;
    std::map<std::string, place> subscribed_;  // every channel wanted, and where it is
    std::set<std::string> pending_;            // channels to subscribe again once the map is read
    boost::asio::steady_timer retry_timer_;
    bool retry_armed_ = false;
    boost::asio::steady_timer reroute_timer_;
    bool reroute_armed_ = false;
    bool closed_ = false;
};

}  // namespace redlock::redis::detail

#endif
