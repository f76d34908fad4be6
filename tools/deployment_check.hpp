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
