// SPDX-License-Identifier: BSL-1.0
#include "deployment_flags.hpp"

#include <redlock/redis/node_spec.hpp>

#include <boost/system/error_code.hpp>

namespace redlock::cli {

void deployment_flags::add_to(CLI::App& command) {
    command.add_option("--config", config_file, "a client_config JSON file (see docs/locks.md)")
        ->type_name("FILE");
    command
        .add_option_function<std::string>(
            "--nodes", [this](const std::string& list) { nodes = split_node_list(list); },
            "the nodes: redis://[:password@]host:port[/db], unix:///path, redis-cluster://, "
            "redis-sentinel://")
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

client_config deployment_flags::to_config(bool validate) const {
    if (config_file && !nodes.empty()) throw usage_error("--config and --nodes: give one of them, not both");
    client_config cfg;
    boost::system::error_code ec;
    std::string why;
    if (config_file) {
        cfg = client_config::from_file(*config_file, ec, why);
        if (ec) throw usage_error("--config " + *config_file + ": " + why);
    } else if (!nodes.empty()) {
        cfg.nodes = nodes;
    } else {
        throw usage_error("no nodes: give --config FILE or --nodes URI,...");
    }
    if (restart_quarantine) cfg.restart_quarantine = *restart_quarantine;
    if (failover_quarantine) cfg.failover_quarantine = *failover_quarantine;
    const std::string source = config_file ? "--config: " : "--nodes: ";
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
