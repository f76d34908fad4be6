// SPDX-License-Identifier: BSL-1.0
#include "deployment_flags.hpp"

#include <redlock/redis/node_spec.hpp>

#include <boost/system/error_code.hpp>

#include <cstdlib>

namespace redlock::cli {

void deployment_flags::add_to(CLI::App& command) {
    command
        .add_option("--config", config_file,
                    "a client_config JSON file (see docs/locks.md); or REDLOCK_CONFIG")
        ->type_name("FILE");
    command
        .add_option_function<std::string>(
            "--nodes", [this](const std::string& list) { nodes = split_node_list(list); },
            "the nodes: redis://[:password@]host:port[/db], unix:///path, redis-cluster://, "
            "redis-sentinel://; or REDLOCK_NODES")
        ->check([](const std::string& list) {
            return split_node_list(list).empty() ? std::string("no node URI given") : std::string();
        })
        ->type_name("URI,URI,...");
    command
        .add_option_function<std::string>(
            "--restart-quarantine", [this](const std::string& on) { restart_quarantine = on == "on"; },
            "override the config's restart quarantine (default on)")
        ->check(CLI::IsMember({"on", "off"}).description(""))
        ->type_name("on|off");
    command
        .add_option_function<std::string>(
            "--failover-quarantine", [this](const std::string& on) { failover_quarantine = on == "on"; },
            "override the config's failover quarantine (default on; off: a promoted replica grants at once "
            "what its old master may still hold)")
        ->check(CLI::IsMember({"on", "off"}).description(""))
        ->type_name("on|off");
}

namespace {

// An environment variable's value; empty when it is unset.
std::string environment(const char* name) {
    const char* value = std::getenv(name);
    return value != nullptr ? std::string(value) : std::string();
}

}  // namespace

client_config deployment_flags::to_config(bool validate) const {
    if (config_file && !nodes.empty()) throw usage_error("--config and --nodes: give one of them, not both");
    // Either flag wins over the environment, both of whose variables it then ignores.
    std::optional<std::string> file = config_file;
    std::vector<std::string> uris = nodes;
    std::string source = config_file ? "--config" : "--nodes";
    if (!config_file && nodes.empty()) {
        const auto env_config = environment("REDLOCK_CONFIG");
        const auto env_nodes = environment("REDLOCK_NODES");
        if (!env_config.empty() && !env_nodes.empty())
            throw usage_error(
                "REDLOCK_CONFIG and REDLOCK_NODES are both set: unset one, or give --config or --nodes");
        if (!env_config.empty()) {
            file = env_config;
            source = "REDLOCK_CONFIG";
        } else if (!env_nodes.empty()) {
            uris = split_node_list(env_nodes);
            source = "REDLOCK_NODES";
            if (uris.empty()) throw usage_error("REDLOCK_NODES: no node URI given");
        } else {
            throw usage_error(
                "no nodes: give --config FILE or --nodes URI,... (or set REDLOCK_CONFIG or REDLOCK_NODES)");
        }
    }
    client_config cfg;
    boost::system::error_code ec;
    std::string why;
    if (file) {
        cfg = client_config::from_file(*file, ec, why);
        if (ec) throw usage_error(source + " " + *file + ": " + why);
    } else {
        cfg.nodes = uris;
    }
    if (restart_quarantine) cfg.restart_quarantine = *restart_quarantine;
    if (failover_quarantine) cfg.failover_quarantine = *failover_quarantine;
    source += ": ";
    if (validate) {
        if ((ec = cfg.validate(why))) throw usage_error(source + why);
        return cfg;
    }
    for (const auto& uri : cfg.nodes) {
        redis::node_spec spec;
        if (redis::parse_node_spec(uri, spec, why)) throw usage_error(source + why);
    }
    return cfg;
}

}  // namespace redlock::cli
