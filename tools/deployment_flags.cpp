#include "deployment_flags.hpp"

#include <redlock/redis/node_spec.hpp>

#include <boost/system/error_code.hpp>

namespace redlock::cli {

bool deployment_flags::take(const std::string& flag, arg_reader& args) {
    if (flag == "--config") {
        config_file = args.value();
    } else if (flag == "--nodes") {
        nodes = split_node_list(args.value());
        if (nodes.empty()) throw usage_error("--nodes: no node URI given");
    } else if (flag == "--restart-quarantine") {
        const auto v = args.value();
        if (v != "on" && v != "off")
            throw usage_error("--restart-quarantine: expected on or off, got \"" + v + "\"");
        restart_quarantine = v == "on";
    } else {
        return false;
    }
    return true;
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
