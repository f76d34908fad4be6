// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_LOCK_NODES_NODE_HEALTH_HPP
#define REDLOCK_LOCK_NODES_NODE_HEALTH_HPP

#include <redlock/resp/value.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::detail {

/// What `INFO server` says about the server process behind a connection.
struct server_info {
    std::string run_id;
    std::chrono::seconds uptime{0};
};

/// Reads run_id and uptime_in_seconds from the text of `INFO server`; false if either is missing
/// or malformed.
[[nodiscard]] bool parse_server_info(std::string_view text, server_info& out);

/// The master_replid of the text of `INFO replication`: 40 hex digits, or empty.
[[nodiscard]] std::string_view parse_replication_id(std::string_view text);
/// The same of an `INFO replication` reply; empty for any other reply (an error, a non-string).
[[nodiscard]] std::string_view replication_id_of(const resp::value& info);

/// Restart quarantine of one node (client-enforced delayed restart), I/O-free. A node that
/// restarted without persistence has lost the locks it granted; until every lease it could have
/// granted before has expired everywhere (max_ttl, plus drift), its grants must not count.
/// - It has not answered INFO since the (re)connect: no vote.
/// - Up for less than max_ttl: no vote until max_ttl + drift after its start (start known to a
///   second: the second is added).
/// - A run_id other than the one seen before (a restart, or a failover to another process that
///   may lack keys): no vote until max_ttl + drift from now, whatever its uptime.
/// - Promoted (a cluster's replica that took over slots from its master, which may not have
///   passed it every grant): no vote until max_ttl + drift from the promotion.
/// - Marked as promoted on the server itself (failover_mark.lua): no vote until the mark's
///   quarantine ends, whether or not this client saw the switch.
/// The first three rules are the restart quarantine's and the last two the failover
/// quarantine's; each goes off with its own setting (client_config).
class node_health {
public:
    using clock = std::chrono::steady_clock;

    /// A new connection: no vote until its INFO answer.
    void on_reconnect() noexcept { known_ = false; }
    /// With `restart_rules` false only the failover quarantine applies: it votes once known.
    void on_server_info(const server_info& info, clock::time_point now, std::chrono::milliseconds max_ttl,
                        double drift_factor, bool restart_rules = true);
    /// The server says that it became a master and that its failover quarantine has `left` to
    /// run (zero: none); before on_server_info of the same handshake.
    void on_failover_mark(clock::time_point now, std::chrono::milliseconds left);

    /// It became a master of slots another master served: it may lack that master's grants.
    void on_promoted(clock::time_point now, std::chrono::milliseconds max_ttl, double drift_factor);

    [[nodiscard]] bool votes(clock::time_point now) const noexcept {
        return known_ && now >= quarantined_until_;
    }
    [[nodiscard]] bool known() const noexcept { return known_; }
    /// The time it votes again; a past time point when it votes.
    /// Calling on_server_info again with the same info and time and a larger max_ttl extends
    /// the quarantine as if that max_ttl had been known then.
    [[nodiscard]] clock::time_point quarantined_until() const noexcept { return quarantined_until_; }
    [[nodiscard]] const std::string& run_id() const noexcept { return run_id_; }
    /// Whether the quarantine is a promotion's (not a restart's).
    [[nodiscard]] bool quarantined_by_promotion() const noexcept {
        return (promoted_at_ && promotion_ends_ >= quarantined_until_) || marked_ends_ >= quarantined_until_;
    }

private:
    bool known_ = false;
    std::string run_id_;
    std::optional<clock::time_point> run_id_changed_at_;  // the last change seen
    std::optional<clock::time_point> promoted_at_;        // the last promotion seen
    clock::time_point promotion_ends_{};                  // its quarantine's end
    clock::time_point marked_ends_{};                     // the end of the one the server told
    clock::time_point quarantined_until_{};
};

/// The quarantine state of a client's nodes, shared by its connections' handshakes (which
/// report INFO server) and its lock operations (which ask who votes); any thread.
class node_health_board {
public:
    using clock = std::chrono::steady_clock;

    /// `restart_rules`: client_config::restart_quarantine (node_health::on_server_info).
    node_health_board(std::size_t nodes, std::chrono::milliseconds max_ttl, double drift_factor,
                      bool restart_rules = true);

    /// A new entry, for one more server of node `owner` (a master of a cluster node); returns
    /// its index. Entries of one owner may be one server (a seed and a master by two names).
    std::size_t add_node(std::size_t owner);

    /// Entry `node`'s server was promoted to master (node_health::on_promoted).
    void on_promoted(std::size_t node);
    /// The text of INFO server from a new connection to `node`; unparsable text: no vote.
    void on_server_info(std::size_t node, std::string_view text);
    /// The reply of failover_mark.lua from a new connection to `node`, before its INFO server:
    /// {left ms, the length the quarantine was started with, the master's replication ID}. A
    /// client whose own length is longer waits the difference too. An error or a malformed
    /// reply: no vote, and why.
    void on_failover_mark(std::size_t node, const resp::value& reply);
    /// Whether a grant of entry `node`'s server counts as far as its replication ID goes:
    /// `replication_id` is what INFO replication said right behind the grant, on its connection.
    /// A promotion always gives a server a new ID, and IDs are never reused: one that a failover
    /// mark of this client read means a server that has been a master since that mark, with
    /// every grant it had then. Any other (the server was made a replica and a master again
    /// while this client's connection stayed open, and may lack what the master between made)
    /// quarantines the entry from now, as a promotion this client saw, is remembered as read,
    /// and the grant does not count.
    [[nodiscard]] bool granted_under(std::size_t node, std::string_view replication_id);
    /// Whether the last failover mark of entry `node` found a replica (it read no replication ID).
    [[nodiscard]] bool marked_as_replica(std::size_t node) const;
    /// The replication ID of entry `node`'s server, read on a connection its mark found a replica
    /// on, after this client saw it become a master (on_promoted): grants under it count once a
    /// quarantine from now is over (the ID may be younger than the promotion seen). Empty: nothing.
    void on_replication_id_read(std::size_t node, std::string_view replication_id);
    /// The length of a failover quarantine this client starts: quarantine_ttl() + drift.
    [[nodiscard]] std::chrono::milliseconds failover_wait() const;
    /// The largest max_ttl that a node says any client of it has recorded (record_max_ttl.lua):
    /// every quarantine waits for it if it is above this client's own, those already running too.
    void on_recorded_max_ttl(std::chrono::milliseconds recorded);
    /// The max_ttl the quarantines wait for: this client's, or a larger one recorded.
    [[nodiscard]] std::chrono::milliseconds quarantine_ttl() const;
    /// Also false for a node that another node's INFO shows to be the same server (one run_id):
    /// two addresses of one server (`localhost`, `127.0.0.1`) must not vote twice.
    [[nodiscard]] bool votes(std::size_t node, clock::time_point now) const;
    /// The node (owner, see add_node()) of another entry whose server reported the same run_id
    /// as entry `node`'s, if any.
    [[nodiscard]] std::optional<std::size_t> same_server_as(std::size_t node) const;
    /// Whether any two nodes are one server: what every acquire asks, without the lock.
    [[nodiscard]] bool any_same_server() const noexcept {
        return any_same_server_.load(std::memory_order_acquire);
    }

    struct view {
        bool voting = false;
        std::chrono::milliseconds quarantine_left{0};  ///< 0 when voting or not yet known
        std::string run_id;
        std::string problem;  ///< why it does not vote, for messages
    };
    [[nodiscard]] view describe(std::size_t node, clock::time_point now) const;

    /// For client_config::on_event: entry `node`'s quarantine, if it is in one now that was not
    /// told yet (its time left, 0 otherwise); it then counts as told.
    [[nodiscard]] std::chrono::milliseconds untold_quarantine(std::size_t node, clock::time_point now);
    /// Whether entry `node` votes again after a quarantine that was told; true once.
    [[nodiscard]] bool told_quarantine_over(std::size_t node, clock::time_point now);

private:
    /// Under the lock.
    void remember_replication_id(std::size_t node, std::string_view id);

    mutable std::mutex mutex_;
    std::vector<node_health> nodes_;
    std::vector<bool> unparsable_;
    std::vector<std::string> mark_failed_;  // per entry: why its failover mark failed, or empty
    // per entry: the replication IDs its failover marks and grants read (granted_under), the
    // latest last; a few, for grants still in flight from before a new connection's mark
    std::vector<std::vector<std::string>> replication_ids_;
    std::vector<bool> marked_as_replica_;                  // per entry: see marked_as_replica()
    std::vector<std::size_t> owner_;                       // per entry: its node
    std::vector<std::optional<std::size_t>> same_server_;  // see same_server_as()
    std::atomic<bool> any_same_server_{false};
    struct seen {
        server_info info;
        clock::time_point at;
    };
    std::vector<std::optional<seen>> last_seen_;  // per node: its last INFO, to judge it again
    std::vector<clock::time_point> told_until_;   // per node: the end of the quarantine told
    std::chrono::milliseconds recorded_max_ttl_{0};
    std::chrono::milliseconds max_ttl_;
    double drift_factor_;
    bool restart_rules_;
};

}  // namespace redlock::detail

#endif
