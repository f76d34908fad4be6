// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_TOOLS_DEPLOYMENT_FLAGS_HPP
#define REDLOCK_TOOLS_DEPLOYMENT_FLAGS_HPP

#include "cli_args.hpp"
#include <redlock/config.hpp>

#include <CLI/CLI.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace redlock::cli {

/// The flags that say which nodes to use, shared by the subcommands:
/// `--config FILE` (a client_config JSON file), `--nodes URI,URI,...`, `--restart-quarantine on|off`,
/// `--failover-quarantine on|off`, `--password-file FILE`.
struct deployment_flags {
    std::optional<std::string> config_file;
    std::vector<std::string> nodes;
    std::optional<bool> restart_quarantine;
    std::optional<bool> failover_quarantine;
    std::optional<std::string> password_file;
    std::map<std::string, std::string> address_map;  ///< --map-address, over the config's

    /// Adds the six flags to `command`, stored here. `--nodes` with no URI in its list and a
    /// quarantine switch other than on or off are parse errors naming the flag.
    void add_to(CLI::App& command);
    /// The config they describe; without --config and --nodes, the one REDLOCK_CONFIG (a file)
    /// or REDLOCK_NODES (a node list) describes. The password of --password-file's first line,
    /// or else of REDLOCK_PASSWORD, logs in to every node whose URI has no credentials. usage_error if they
    /// describe none, or a config that is not valid (with `validate` false: only a node URI that does not
    /// parse).
    [[nodiscard]] client_config to_config(bool validate = true) const;
};

}  // namespace redlock::cli

#endif
