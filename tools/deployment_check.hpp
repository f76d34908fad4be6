#ifndef REDLOCK_TOOLS_DEPLOYMENT_CHECK_HPP
#define REDLOCK_TOOLS_DEPLOYMENT_CHECK_HPP

#include <redlock/config.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::cli {

/// What `redlock check` learned from one node (I/O-free input of check_deployment).
struct node_report {
    std::string name;  ///< the URI without its password
    bool reachable = false;
    std::string error;  ///< why it was not reachable
    std::string run_id;
    std::string version;      ///< INFO's redis_version; empty: unknown
    std::string role;         ///< "master" or "slave"
    std::optional<bool> aof;  ///< appendonly; nullopt: unknown
    std::string appendfsync;  ///< empty: unknown
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

struct finding {
    enum class level { info, warning, unsafe };
    level severity;
    std::string text;
};

/// The verdicts on a deployment: every unsafe setting and why.
std::vector<finding> check_deployment(const client_config& cfg, const std::vector<node_report>& nodes);

/// 0 if nothing is worse than info, 1 with warnings, 2 with anything unsafe.
int exit_status_of(const std::vector<finding>& findings);

/// The value of `field` in an INFO reply's text ("role:master\r\n" -> "master"); empty if absent.
std::string info_field(std::string_view info, std::string_view field);

}  // namespace redlock::cli

#endif
