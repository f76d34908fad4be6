// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_TOOLS_DEPLOYMENT_CHECK_HPP
#define REDLOCK_TOOLS_DEPLOYMENT_CHECK_HPP

#include <redlock/config.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace redlock::cli {

/// What `redlock check` learned from one node (I/O-free input of check_deployment).
struct node_report {
    std::string name;  ///< the URI without its password
    bool reachable = false;
    std::string error;  ///< why it was not reachable
    std::string run_id;
    std::optional<std::int64_t> uptime_s;  ///< INFO's uptime_in_seconds; nullopt: unknown
    std::string version;                   ///< INFO's redis_version; empty: unknown
    std::string role;                      ///< "master" or "slave"
    std::optional<bool> aof;               ///< appendonly; nullopt: unknown
    std::string appendfsync;               ///< empty: unknown
    std::optional<std::int64_t> maxmemory;
    std::string maxmemory_policy;                 ///< empty: unknown
    std::string config_error;                     ///< CONFIG GET refused (ACL, rename-command): its error
    std::optional<std::int64_t> clock_offset_us;  ///< TIME minus our clock at mid-round-trip
    std::int64_t clock_uncertainty_us = 0;        ///< half the round trip
    std::string script_error;                     ///< EVAL failed: its error
    std::vector<std::string> refused;             ///< commands the ACL refused ("SET: NOPERM ...")
    /// Two TIME readings some time apart: how far the node's clock went, how far ours went,
    /// and what the round trips leave unknown (microseconds). Unset: not measured.
    std::optional<std::int64_t> clock_span_server_us, clock_span_local_us;
    std::int64_t clock_span_uncertainty_us = 0;
    /// The largest max_ttl any client recorded on the node (`{<key_prefix>}:max_ttl`).
    std::optional<std::int64_t> recorded_max_ttl_ms;
    /// What was dialed ("host", port; empty host: a unix socket) and where the server says the
    /// connection arrived (CLIENT INFO's laddr, "ip:port"; empty: unknown).
    std::string dialed_host;
    std::uint16_t dialed_port = 0;
    std::string server_laddr;
};

/// What `redlock check` learned of a Redis Cluster voter: the slot map one seed gave, and a
/// probe of every master in it (I/O-free input of check_deployment).
struct cluster_report {
    std::string name;                      ///< the URI without its password
    std::vector<std::string> seed_errors;  ///< "host:port: why" of each seed that gave no map
    std::string seed;                      ///< "host:port" of the seed whose answers these are
    /// A seed answered but neither CLUSTER SLOTS nor CLUSTER SHARDS gave a map: "host:port: <the
    /// server's words>".
    std::string slots_error;
    /// The map came from CLUSTER SHARDS (the server refused CLUSTER SLOTS).
    bool map_from_shards = false;
    std::string state;                            ///< CLUSTER INFO's cluster_state; empty: unknown
    std::string info_error;                       ///< CLUSTER INFO failed: its error
    std::optional<std::int64_t> node_timeout_ms;  ///< CONFIG GET cluster-node-timeout
    std::string node_timeout_error;               ///< that CONFIG GET failed: its error
    std::string nodes_error;         ///< CLUSTER NODES failed: its error (replicas counted from the map)
    std::size_t unserved_slots = 0;  ///< slots no master serves
    struct master {
        std::string host;
        std::uint16_t port = 0;
        std::string id;  ///< its node id, if the map said it
        std::size_t slots = 0;
        std::size_t replicas = 0;         ///< replicas that could take over (not flagged fail)
        std::size_t failed_replicas = 0;  ///< replicas flagged fail or fail?
        node_report server;               ///< its probe, as of a single server
    };
    std::vector<master> masters;
};

/// What one sentinel said about the master of a Sentinel voter.
struct sentinel_answer {
    std::string endpoint;  ///< "host:port"
    bool reachable = false;
    std::string error;  ///< why it did not answer
    /// SENTINEL MASTER <name>; master_error: its error reply.
    std::string master_error;
    std::optional<std::int64_t> quorum, down_after_ms, num_slaves, num_other_sentinels;
    std::string flags;
    /// SENTINEL CKQUORUM <name>: OK or not, and its words.
    std::optional<bool> ckquorum_ok;
    std::string ckquorum;
    /// SENTINEL GET-MASTER-ADDR-BY-NAME <name>: the master it names; empty: none, and
    /// master_addr_error says why ("knows no master by that name", an error reply).
    std::string master_host;
    std::uint16_t master_port = 0;
    std::string master_addr_error;
};

/// What `redlock check` learned of a Sentinel voter: every sentinel's answers, and a probe of
/// the master they name (I/O-free input of check_deployment).
struct sentinel_report {
    std::string name;  ///< the URI without its password
    std::string master_name;
    std::vector<sentinel_answer> sentinels;  ///< one per sentinel of the URI, in its order
    /// The master probed (named by the most sentinels); empty host: none named, not probed.
    std::string master_host;
    std::uint16_t master_port = 0;
    node_report master;
};

/// One voter of the deployment: a single server, a cluster, or a master watched by Sentinel.
using voter_report = std::variant<node_report, cluster_report, sentinel_report>;

struct finding {
    /// unchecked: a voter (or a server behind one) did not answer, so nothing is known of it.
    enum class level { info, warning, unchecked, unsafe };
    level severity;
    std::string text;
};

/// The verdicts on a deployment: every unsafe setting and why. Each report is one voter (N is
/// their number); a cluster's masters and a Sentinel voter's master are checked as servers are.
std::vector<finding> check_deployment(const client_config& cfg, const std::vector<voter_report>& voters);
/// The same, for a deployment of single servers.
std::vector<finding> check_deployment(const client_config& cfg, const std::vector<node_report>& nodes);

/// What a probed server is to the deployment: a voter of its own, a master of a cluster voter,
/// or the master that a Sentinel voter's sentinels name.
enum class server_role { voter, cluster_master, sentinel_master };

/// The verdicts on one probed server (those of check_deployment), each text starting with `label`.
void check_server(const client_config& cfg, const std::string& label, const node_report& n, server_role role,
                  std::vector<finding>& out);

/// "host:port" ("[::1]:port" for an IPv6 address).
std::string endpoint(const std::string& host, std::uint16_t port);

/// The exit statuses of `redlock check`, the worst finding's (2 is a usage error, as for
/// every command).
inline constexpr int check_safe = 0;
inline constexpr int check_warnings = 1;
inline constexpr int check_unchecked = 3;
inline constexpr int check_unsafe = 4;

/// check_safe if nothing is worse than info, else the worst finding's status: check_warnings,
/// check_unchecked, check_unsafe.
int exit_status_of(const std::vector<finding>& findings);

/// The value of `field` in an INFO reply's text ("role:master\r\n" -> "master"); empty if absent.
std::string info_field(std::string_view info, std::string_view field);

}  // namespace redlock::cli

#endif
