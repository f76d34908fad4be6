// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_REDIS_NODE_LINK_HPP
#define REDLOCK_REDIS_NODE_LINK_HPP

#include "redis/cluster_link.hpp"
#include "redis/cluster_slot.hpp"
#include "redis/sentinel_locator.hpp"
#include <redlock/redis/connection.hpp>
#include <redlock/redis/node_spec.hpp>
#include <redlock/redis/script.hpp>

#include <boost/asio/any_completion_handler.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

namespace redlock::redis::detail {

/// One voter's way to its data: one connection to a server, a cluster whose requests go to
/// the master of their key's slot, or one connection to the master that Sentinel names (the
/// connection asks the sentinels before each attempt, and is moved at once when they announce
/// a failover). Every request names a key of the resource it is about (all of one resource's
/// keys share a slot); a single server ignores it. Cluster requests run on the strand; a
/// server's connection may be used from any thread.
class node_link {
public:
    using strand_type = cluster_link::strand_type;
    using config_for = cluster_link::config_for;

    /// `make_config` gives the configuration of the connection to each server: the one server,
    /// each cluster node the link connects to, or (given the first sentinel's address) the
    /// master. `on_new_master` is told of a server that became a master after the first one
    /// known: a cluster's promoted replica, or the master Sentinel moved to. `on_redirect` is
    /// told of a cluster's MOVED and ASK replies.
    node_link(strand_type strand, const node_spec& spec, const config_for& make_config,
              cluster_link::new_master_fn on_new_master = {}, cluster_link::redirect_fn on_redirect = {});
    ~node_link();
    node_link(const node_link&) = delete;
    node_link& operator=(const node_link&) = delete;

    /// Starts connecting (a cluster: and reading its slot map).
    void start();
    void close();

    [[nodiscard]] bool routes_by_slot() const noexcept { return cluster_ != nullptr; }
    /// The cluster, or null for a single server.
    [[nodiscard]] cluster_link* cluster() noexcept { return cluster_.get(); }
    [[nodiscard]] const cluster_link* cluster() const noexcept { return cluster_.get(); }
    /// A cluster: cluster_link::answering(); null for a single server or Sentinel's master.
    [[nodiscard]] const node_address* answering() const noexcept {
        return cluster_ ? cluster_->answering() : nullptr;
    }
    /// The sentinels, or null if the server is not found through them.
    [[nodiscard]] const sentinel_locator* sentinels() const noexcept { return sentinels_.get(); }
    [[nodiscard]] sentinel_locator* sentinels() noexcept { return sentinels_.get(); }

    /// async_exec() of `req`, all of whose commands are on keys in `key`'s slot.
    template <class Handler>
    void exec(std::string_view key, const resp::request& req, std::chrono::milliseconds timeout,
              Handler&& h) {
        if (server_) {
            server_->async_exec(req, timeout, std::forward<Handler>(h));
            return;
        }
        exec_routed(key_slot(key), req.payload(), req.size(), timeout, std::forward<Handler>(h));
    }
    /// async_eval() of `s` on `keys`, the first of which routes it. `tryagain`: for a cluster.
    template <class Handler>
    void eval(const script& s, std::span<const std::string_view> keys, std::span<const std::string_view> args,
              std::chrono::milliseconds timeout, Handler&& h,
              cluster_link::on_tryagain tryagain = cluster_link::on_tryagain::retry) {
        if (server_) {
            server_->async_eval(s, keys, args, timeout, std::forward<Handler>(h));
            return;
        }
        eval_routed(keys.empty() ? 0 : key_slot(keys.front()), s, keys, args, timeout,
                    std::forward<Handler>(h), tryagain);
    }

    /// eval() with `trailer` (commands without keys, such as WAIT) in the same write right
    /// behind the script, on the connection the script goes to, again with it after a NOSCRIPT
    /// (and on a cluster, a MOVED or an ASK): cluster_link::eval_then(). `h(error_code,
    /// std::vector<resp::value>)` gets the script's reply, then the trailer's.
    void eval_then(const script& s, std::span<const std::string_view> keys,
                   std::span<const std::string_view> args, const resp::request& trailer,
                   std::chrono::milliseconds timeout, cluster_link::exec_handler h);

    /// Calls `on_drained` on the strand once every connection of this voter has answered what
    /// was sent to it before, or failed (cluster_link::drain; a server: one PING).
    void drain(std::chrono::milliseconds timeout, cluster_link::drained_fn on_drained);

    [[nodiscard]] bool is_connected() const;
    [[nodiscard]] connection_error last_error() const;
    /// What a subscriber connection of this voter copies: the server's configuration (with
    /// Sentinel: located as the master is), or for a cluster that of its first seed, whose
    /// address subscriber_link replaces with each master's.
    [[nodiscard]] const connection_config& subscriber_config() const noexcept { return subscriber_config_; }

private:
    void exec_routed(std::uint16_t slot, std::string payload, std::size_t commands,
                     std::chrono::milliseconds timeout, cluster_link::exec_handler h);
    void eval_routed(std::uint16_t slot, const script& s, std::span<const std::string_view> keys,
                     std::span<const std::string_view> args, std::chrono::milliseconds timeout,
                     cluster_link::eval_handler h, cluster_link::on_tryagain tryagain);

    strand_type strand_;
    // Shared: a failover announced by the sentinels moves it, from a handler that may run
    // after this link is gone.
    std::shared_ptr<connection> server_;
    std::shared_ptr<cluster_link> cluster_;
    std::shared_ptr<sentinel_locator> sentinels_;
    cluster_link::new_master_fn on_new_master_;
    connection_config subscriber_config_;
};

}  // namespace redlock::redis::detail

#endif
