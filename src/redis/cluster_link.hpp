// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_REDIS_CLUSTER_LINK_HPP
#define REDLOCK_REDIS_CLUSTER_LINK_HPP

#include "redis/address_map.hpp"
#include "redis/cluster_topology.hpp"
#include "redis/context_shutdown.hpp"
#include "redis/serial_executor.hpp"
#include <redlock/redis/connection.hpp>
#include <redlock/redis/node_address.hpp>
#include <redlock/redis/script.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace redlock::redis::detail {

/// Redirects and retries one cluster link has followed, for metrics and tests.
struct cluster_stats {
    std::uint64_t moved = 0;      ///< MOVED replies followed (the slot map was out of date)
    std::uint64_t asked = 0;      ///< ASK replies followed (a slot being migrated)
    std::uint64_t tryagain = 0;   ///< TRYAGAIN replies retried, or handed back to be split
    std::uint64_t refreshes = 0;  ///< slot maps read (CLUSTER SHARDS or SLOTS)
    std::size_t masters = 0;      ///< masters in the current slot map
    std::size_t connections = 0;  ///< open: the masters' and the seeds'; gone nodes' are closed
};

/// One Redis Cluster as one voter of a quorum sees it: a pipelined connection per master, the
/// slot map, and each request routed by its slot. MOVED: the map learns the slot's new master,
/// the request goes there, and the whole map is read again; ASK: the request goes once, after
/// ASKING, to the node importing the slot; TRYAGAIN: sent again after a short pause, within the
/// request's timeout. A slot no master serves, or too many redirects, is answered with the
/// cluster's own kind of error reply (CLUSTERDOWN ...), never a hang.
///
/// A server that starts serving slots after the first map without having been a master in it
/// (a replica promoted by a failover, which may lack grants its master made) is reported to
/// `on_new_master`, so that the lock layer can keep its grants from counting for a while.
///
/// The map is read (CLUSTER SHARDS; CLUSTER SLOTS from a server that refuses it) from the seeds or the known
/// masters at start(), after each MOVED, and every `refresh_interval`; a node whose map serves no slot (it
/// never joined) or only some (it lags, or a failover is under way) is passed over for the next, and a
/// partial map is taken only when no node has a whole one. Requests made before the first map wait for it,
/// within their timeout; so does, once, a request whose master is not connected after it was (it may have
/// died and been failed over). Strand only (but is_connected(), last_error() and stats(): any thread): every
/// member runs on the strand given to the constructor, which the connections share.
class cluster_link final : public std::enable_shared_from_this<cluster_link>,
                           public context_shutdown_listener {
public:
    using exec_handler = boost::asio::any_completion_handler<void(error_code, std::vector<resp::value>)>;
    using eval_handler = boost::asio::any_completion_handler<void(error_code, resp::value)>;
    /// What a TRYAGAIN reply (a multi-key request met a slot half migrated) does: sent again
    /// after a pause, within the timeout; or handed back at once, for a caller that can split
    /// the request into single-key ones, which a migrating slot serves (or redirects) at once.
    enum class on_tryagain { retry, hand_back };
    /// Called on the strand.
    using drained_fn = std::function<void()>;
    /// The configuration of the connection to the cluster node at `address`.
    using config_for = std::function<connection_config(const node_address&)>;
    using strand_type = serial_executor;

    static constexpr std::chrono::milliseconds refresh_interval{5000};
    static constexpr int max_redirects = 5;

    /// Called on the strand with a server that starts serving slots without having been a
    /// master in the map before: a promoted replica (a failover), or a new master, and the
    /// connection to it if there is one (made while it was not a master: a seed's), for what
    /// the lock layer asks it; null otherwise.
    using new_master_fn = std::function<void(const node_address&, connection* connected)>;
    /// Called on the strand for each redirect a request follows: a MOVED (`ask` false: the map
    /// was out of date) or an ASK (the slot is being migrated), with the slot and its new server.
    using redirect_fn = std::function<void(bool ask, std::uint16_t slot, const node_address& to)>;

    /// `remap`: applied to every master address the cluster announces (CLUSTER SHARDS or SLOTS, MOVED, ASK).
    cluster_link(strand_type strand, std::vector<node_address> seeds, config_for make_config,
                 new_master_fn on_new_master = {}, redirect_fn on_redirect = {}, address_map remap = {});
    ~cluster_link();
    cluster_link(const cluster_link&) = delete;
    cluster_link& operator=(const cluster_link&) = delete;

    /// Connects to the seeds and reads the slot map; then keeps it current.
    void start();
    /// Drops the requests waiting for the first map: their handlers can never run, and they
    /// may own what owns this link.
    void on_context_shutdown() noexcept override;
    /// Closes every connection; pending requests complete with connection_closed.
    void close();

    /// Sends `commands` encoded commands, all on keys of `slot`. Zero timeout: none.
    void exec(std::uint16_t slot, std::string payload, std::size_t commands,
              std::chrono::milliseconds timeout, exec_handler handler);
    /// Runs `s` (its EVALSHA encoded in `evalsha`) on the master of `slot`.
    void eval(std::uint16_t slot, const script& s, std::string evalsha, std::chrono::milliseconds timeout,
              eval_handler handler, on_tryagain tryagain = on_tryagain::retry);
    /// eval() with `trailer` (`trailer_commands` encoded commands without keys, such as WAIT)
    /// in the same write right behind the script, on whatever connection the script goes to: a
    /// MOVED, an ASK or a NOSCRIPT sends both again. The handler gets the script's reply, then
    /// the trailer's.
    void eval_then(std::uint16_t slot, const script& s, std::string evalsha, std::string trailer,
                   std::size_t trailer_commands, std::chrono::milliseconds timeout, exec_handler handler);

    /// Completes once each open connection has answered a PING sent now, or failed: a server
    /// answers in order, so everything sent to it before has had its reply. For a close that
    /// must not cut off what was sent last (a request a MOVED sends on after this is not waited
    /// for).
    void drain(std::chrono::milliseconds timeout, drained_fn on_drained);

    /// Reads the slot map again soon (at most once per 100 ms): someone met a sign that it
    /// changed.
    void refresh();
    /// The masters of the map as it is now.
    [[nodiscard]] const std::vector<node_address>& masters() const noexcept { return map_.masters(); }

    /// The connection to the master of `slot` as the map says now; null if none is known.
    [[nodiscard]] connection* master_for(std::uint16_t slot);
    /// The address of the master of `slot`; null if none is known.
    [[nodiscard]] const node_address* master_address(std::uint16_t slot) const;
    /// While a request's handler runs: the server whose reply it gets (the master it was routed
    /// to, the ASK target, the new master after a MOVED), whatever the slot map says by then;
    /// null at any other time, and for a failure without a reply.
    [[nodiscard]] const node_address* answering() const noexcept { return answering_; }
    /// Whether the slot map is known and every master in it is connected.
    [[nodiscard]] bool is_connected() const;
    /// The last failure to read the map, or of a master's connection.
    [[nodiscard]] connection_error last_error() const;
    [[nodiscard]] cluster_stats stats() const;
    [[nodiscard]] const std::vector<node_address>& seeds() const noexcept { return seeds_; }

private:
    struct request;

    void route(const std::shared_ptr<request>& r);
    void send(const std::shared_ptr<request>& r, connection& c, bool asking);
    /// send() of a script with a trailer (eval_then).
    void send_with_trailer(const std::shared_ptr<request>& r, connection& c, bool asking);
    void on_replies(const std::shared_ptr<request>& r, connection& from, error_code ec,
                    std::vector<resp::value> replies);
    void finish(const std::shared_ptr<request>& r, error_code ec, std::vector<resp::value> replies);
    /// finish() from a completion on the strand: the handler runs now, without a post.
    static void complete(const std::shared_ptr<request>& r, error_code ec, std::vector<resp::value> replies);
    /// Marks `r` done and stops its timer; false if it was done already.
    static bool settle(request& r);
    /// Hands `r`'s handler its result; once, after settle().
    static void call_handler(request& r, error_code ec, std::vector<resp::value> replies);
    /// Completes `r` with connection_closed once the link is gone.
    static void abandon(const std::shared_ptr<request>& r);
    void park(const std::shared_ptr<request>& r);
    void reroute_parked();
    // Asks candidates[candidate] and on for CLUSTER SHARDS (or SLOTS) until one serves every slot; else
    // takes `best`, the map that served the most.
    void read_map_from(std::size_t candidate, std::vector<node_address> candidates,
                       std::optional<slot_map> best);
    void map_read(slot_map map);
    /// The next read of the map: `after` from now, or the usual interval.
    void arm_refresh_timer(std::optional<std::chrono::steady_clock::duration> after = std::nullopt);
    connection& connection_to(const node_address& address);
    /// Tells on_new_master_ of `address`, with its connection if there is one.
    void new_master(const node_address& address);
    /// The connection to map_.masters()[master], cached by index until the map is read again.
    connection& master_connection(std::size_t master);
    void set_last_error(connection_error e);
    /// Whether the connection to `address` exists and is up (strand, or under status_mutex_).
    [[nodiscard]] bool connected_to(const node_address& address) const;
    /// Closes the connections to nodes that are neither a master in the map nor a seed.
    void close_gone_nodes();
    void count(std::uint64_t& counter);
    [[nodiscard]] std::chrono::milliseconds time_left(const request& r) const;

    strand_type strand_;
    std::vector<node_address> seeds_;
    address_map remap_;
    config_for make_config_;
    new_master_fn on_new_master_;
    redirect_fn on_redirect_;
    std::map<std::string, std::unique_ptr<connection>> connections_;  // by "host:port"
    // Closed connections to nodes gone from the map, and when they were closed.
    std::vector<std::pair<std::chrono::steady_clock::time_point, std::unique_ptr<connection>>> gone_;
    slot_map map_;
    std::vector<connection*> master_connections_;  // by index into map_.masters(); null: not looked up
    bool map_known_ = false;
    bool refreshing_ = false;
    bool refresh_again_ = false;
    bool refresh_soon_ = false;    // the timer is set for a read held back by min_refresh_gap
    bool shards_refused_ = false;  // a node refused CLUSTER SHARDS: maps are read by CLUSTER SLOTS
    std::chrono::steady_clock::time_point last_refresh_{};
    bool closed_ = false;
    const node_address* answering_ = nullptr;       // see answering()
    master_reference reference_;                    // what a master is new against (on_new_master)
    std::vector<std::shared_ptr<request>> parked_;  // waiting for the first map
    boost::asio::steady_timer refresh_timer_;
    // is_connected(), last_error() and stats() may be asked from any thread (a client's
    // metrics): what they read changes under this lock, on the strand.
    mutable std::mutex status_mutex_;
    connection_error last_error_;
    cluster_stats stats_;
};

}  // namespace redlock::redis::detail

#endif
