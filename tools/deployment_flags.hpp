#ifndef REDLOCK_TOOLS_DEPLOYMENT_FLAGS_HPP
#define REDLOCK_TOOLS_DEPLOYMENT_FLAGS_HPP

#include "cli_args.hpp"
#include <redlock/config.hpp>

#include <optional>
#include <string>
#include <vector>

namespace redlock::cli {

/// The flags that say which nodes to use, shared by the subcommands:
/// `--config FILE` (a client_config JSON file), `--nodes URI,URI,...`, `--restart-quarantine on|off`.
struct deployment_flags {
    std::optional<std::string> config_file;
    std::vector<std::string> nodes;
    std::optional<bool> restart_quarantine;

    /// Takes `flag` (just read from `args`) if it is one of ours; false if it is not.
    bool take(const std::string& flag, arg_reader& args);
    /// The config they describe; usage_error if they describe none, or a config that is not valid
    /// (with `validate` false: only a node URI that does not parse).
    [[nodiscard]] client_config to_config(bool validate = true) const;

    static constexpr const char* help =
        "  --config FILE             a client_config JSON file (see docs/locks.md)\n"
        "  --nodes URI,URI,...       the nodes: redis://[:password@]host:port[/db], unix:///path\n"
        "  --restart-quarantine on|off\n"
        "                            override the config's restart quarantine (default on)\n";
};

}  // namespace redlock::cli

#endif
