// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_CONFIG_HPP
#define REDLOCK_CONFIG_HPP

#include <redlock/event.hpp>
#include <redlock/export.hpp>
#include <redlock/redis/node_spec.hpp>
#include <redlock/tls_config.hpp>

#include <boost/system/error_code.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace redlock {

/// Random delay between two acquire attempts, drawn uniformly from [min_delay, max_delay].
struct REDLOCK_API retry_config {
    std::chrono::milliseconds min_delay{50};
    std::chrono::milliseconds max_delay{250};
};

/// What a node's URI cannot say: the JSON object form of a node,
/// `{"uri": "...", "sentinel_username": "...", "sentinel_password": "...", "tls": {...}}`.
struct REDLOCK_API node_settings {
    /// A Sentinel node: how to log in to its sentinels (its URI's credentials are the master's).
    std::string sentinel_username;
    std::string sentinel_password;
    /// This node's TLS settings, instead of client_config::tls (a rediss:// node or cluster).
    std::optional<tls_config> tls;
};

/// Everything a `client` needs: the N independent masters and the timing of the algorithm.
///
/// Build it by hand, or from JSON (every key but `nodes` is optional):
/// ```json
/// { "nodes": ["redis://127.0.0.1:7001", "redis://:pw@host:7002/0", "unix:///run/redis.sock",
///             {"uri": "redis-sentinel://s1:26379,s2:26379#m", "sentinel_password": "..."}],
///   "key_prefix": "redlock:", "max_ttl_ms": 60000, "drift_factor": 0.01,
///   "node_timeout_ms": 50, "connect_timeout_ms": 1000, "health_check_interval_ms": 2000,
///   "client_name": "redlock",
///   "restart_quarantine": true, "failover_quarantine": true, "max_queued_requests": 100000,
///   "max_subscriptions": 10000,
///   "retry": {"min_delay_ms": 50, "max_delay_ms": 250},
///   "address_map": {"redis-1.internal:6379": "203.0.113.7:16379"},
///   "tls": {"ca_file": "...", "cert_file": "...", "key_file": "...", "server_name": "...",
///           "verify": true} }
/// ```
struct REDLOCK_API client_config {
    /// One URI per voter: an independent master (`redis://`, `rediss://`, `unix://`), a Redis
    /// Cluster (`redis-cluster://seed,seed,...`) or a master watched by Sentinel
    /// (`redis-sentinel://s1,s2,...#name`); see redis::parse_node_spec and docs/deployments.md. N =
    /// nodes.size(); N = 1 is the lock on one deployment. The same server in two nodes is an error: it would
    /// vote twice.
    std::vector<std::string> nodes;
    /// Empty, or one per node, in the order of `nodes`: what their URIs cannot say.
    std::vector<node_settings> per_node;
    /// Where to connect instead of the addresses a Redis Cluster or the sentinels announce (the
    /// masters in CLUSTER SHARDS or SLOTS and MOVED/ASK, the master a sentinel names), for
    /// servers behind NAT or in containers: "host:port" -> "host:port", or "host" -> "host"
    /// (any port of that host, the port kept). The URIs in `nodes` are used as written.
    std::map<std::string, std::string> address_map;
    /// Keys of resource R are "{<key_prefix>R}:lock" (and :fence, :queue, channel :released).
    std::string key_prefix = "redlock:";
    /// The longest ttl a lock_options may ask for.
    std::chrono::milliseconds max_ttl{60000};
    /// Clock drift allowance: validity = ttl - elapsed - (ttl * drift_factor + 2 ms). In [0, 0.5).
    double drift_factor = 0.01;
    /// Per-node timeout of each lock command; a lock_options may lower it (default min(this, ttl/10)).
    /// A command sent while the node's first connection attempt (made at construction) is still
    /// running starts its clock when that attempt ends, which connect_timeout bounds.
    std::chrono::milliseconds node_timeout{50};
    /// Connect + handshake timeout of each node connection.
    std::chrono::milliseconds connect_timeout{1000};
    /// Each node connection PINGs when idle this long, and is given up for a new one when a reply
    /// is owed and nothing arrived for two intervals (a server that went away without a word).
    /// Zero: never.
    std::chrono::milliseconds health_check_interval{2000};
    /// CLIENT SETNAME of the node connections; empty: none.
    std::string client_name = "redlock";
    /// Restart quarantine (a delayed restart enforced by the client): on every (re)connect the
    /// client reads the node's run_id and uptime (INFO server); a node up for less than max_ttl,
    /// or whose run_id changed, does not vote until max_ttl + drift after its start (or after
    /// the change), since it may have lost locks in a restart without persistence. Releases
    /// still go to it. Turn it off only for nodes that cannot lose a lock (AOF with
    /// appendfsync always), or for servers started empty a moment ago, as tests and demos do.
    bool restart_quarantine = true;
    /// Failover quarantine: a master that became one less than max_ttl + drift ago (a replica
    /// promoted by Sentinel or by a cluster failover) does not vote until then, since its old
    /// master's grants may not have reached it. Whether or not this client saw the switch: each
    /// handshake runs failover_mark.lua, which keeps the promotion's quarantine on the master
    /// itself (keys "{<key_prefix>failover:<n>}:mark", ":length" and ":quarantine"; it lasts
    /// the longest max_ttl + drift any client recorded there), and a client that watches the
    /// switch starts one at once. Independent of restart_quarantine: persistence
    /// does nothing against a failover. Turning it off lets a promoted master grant at once a
    /// lock that an unreplicated grant of its old master still holds: two holders, unless every
    /// lease waits for a replica (lock_options::replicas).
    bool failover_quarantine = true;
    /// Record who holds in every token this client makes: its host name and process id, and
    /// the acquisition's lock_options::label, which async_inspect and `redlock inspect` show
    /// (identity_of). They ride in the token (hex, after its 128 random bits): about 40 bytes
    /// more per lock and per command that names it. Off: tokens are the random bits alone.
    bool identify_holder = true;
    /// Per node connection: requests waiting beyond this fail at once with error::queue_full
    /// (back-pressure while a node is slow or away; an acquire counts that node as failed).
    /// Zero: no limit.
    std::size_t max_queued_requests = 100000;
    /// Channels the client subscribes to at once for its waiters (one per resource waited on,
    /// one per fair waiter); a waiter beyond it waits by timed retries instead. Zero: no limit.
    std::size_t max_subscriptions = 10000;
    retry_config retry;
    tls_config tls;
    /// Told what happens as it happens (event_kind: grants, releases, losses, the watchdog, nodes
    /// going down and up, quarantines), for a logger or a tracer. Called on a strand of the
    /// client's executor, posted: never from inside the library's own state (so it may call the
    /// client), never twice at once, in the order the events happened. Not from JSON. A callback that throws
    /// loses that one event: the exception is caught and counted in metrics().event_callback_failures, and
    /// the client goes on.
    std::function<void(const event&)> on_event;

    /// Parses a JSON document. Throws boost::system::system_error with error::invalid_config
    /// (or error::invalid_uri for a node URI) and a message naming the key, e.g.
    /// "client_config: retry.min_delay_ms: expected a non-negative integer, got string".
    static client_config from_json(std::string_view json);
    /// Non-throwing variant: on failure returns the error and sets `why`; the result is then
    /// a default-constructed config.
    static client_config from_json(std::string_view json, boost::system::error_code& ec, std::string& why);
    /// Reads and parses a JSON file; a file that cannot be read is error::invalid_config too.
    static client_config from_file(const std::string& path);
    static client_config from_file(const std::string& path, boost::system::error_code& ec, std::string& why);

    /// Checks a config built by hand (from_json runs it too): returns the first problem and
    /// sets `why` to a message naming the field, or an empty error_code.
    [[nodiscard]] boost::system::error_code validate(std::string& why) const;

    /// The nodes parsed (redis::parse_node_spec), with what `per_node` adds to them. Throws
    /// boost::system::system_error with error::invalid_uri for a URI that does not parse.
    [[nodiscard]] std::vector<redis::node_spec> node_specs() const;
};

}  // namespace redlock

#endif
