// SPDX-License-Identifier: BSL-1.0
#include "deployment_flags.hpp"

#include <redlock/redis/node_spec.hpp>

#include <boost/system/error_code.hpp>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <string_view>

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
    command
        .add_option_function<std::vector<std::string>>(
            "--map-address",
            [this](const std::vector<std::string>& pairs) {
                for (const auto& pair : pairs) {
                    const auto equals = pair.find('=');
                    address_map[pair.substr(0, equals)] = pair.substr(equals + 1);
                }
            },
            "connect to TO where a cluster or the sentinels announce FROM (host or host:port; NAT, "
            "containers); repeatable")
        ->check([](const std::string& pair) {
            const auto equals = pair.find('=');
            return equals == std::string::npos || equals == 0 || equals + 1 == pair.size()
                       ? std::string("expected FROM=TO")
                       : std::string();
        })
        ->allow_extra_args(false)  // one pair per flag: a word after it is a RESOURCE
        ->type_name("FROM=TO");
    command
        .add_option("--password-file", password_file,
                    "log in to every node whose URI has no password with the first line of FILE; or "
                    "REDLOCK_PASSWORD")
        ->type_name("FILE");
}

namespace {

// An environment variable's value; empty when it is unset.
std::string environment(const char* name) {
    const char* value = std::getenv(name);
    return value != nullptr ? std::string(value) : std::string();
}

// Percent-encodes all but the unreserved characters, for a URI's credentials.
std::string percent_encoded(std::string_view text) {
    static constexpr char hex[] = "0123456789ABCDEF";
    std::string out;
    for (const char c : text) {
        const auto byte = static_cast<unsigned char>(c);
        if (std::isalnum(byte) != 0 || c == '-' || c == '.' || c == '_' || c == '~') {
            out += c;
        } else {
            out += '%';
            out += hex[byte >> 4];
            out += hex[byte & 0xf];
        }
    }
    return out;
}

// `uri` logging in with `password` if it has no credentials of its own, which win. A URI that
// does not parse is left as it is, for the config's validation to name.
std::string with_password(const std::string& uri, const std::string& password) {
    redis::node_spec spec;
    std::string why;
    if (redis::parse_node_spec(uri, spec, why) || spec.addresses.empty()) return uri;
    const auto& first = spec.addresses.front();
    if (!first.password.empty() || !first.username.empty()) return uri;
    const auto credentials_at = uri.find("://") + 3;
    std::string out = uri.substr(0, credentials_at);
    out += ':';
    out += percent_encoded(password);
    out += '@';
    out += uri.substr(credentials_at);
    return out;
}

// The password of --password-file (its first line), else REDLOCK_PASSWORD; empty if neither.
std::string password_from(const std::optional<std::string>& file) {
    if (!file) return environment("REDLOCK_PASSWORD");
    std::ifstream in(*file);
    std::string line;
    if (!in || !std::getline(in, line)) throw usage_error("--password-file " + *file + ": cannot read it");
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) throw usage_error("--password-file " + *file + ": its first line is empty");
    return line;
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
    for (const auto& [from, to] : address_map)
        cfg.address_map[from] = to;
    if (const auto password = password_from(password_file); !password.empty()) {
        for (auto& uri : cfg.nodes)
            uri = with_password(uri, password);
    }
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
