// SPDX-License-Identifier: BSL-1.0
#include "node_connections.hpp"

#include "redis/node_link.hpp"

namespace redlock::cli {

namespace {

redis::connection_config connection_config_for(const client_config& cfg, redis::node_address address) {
    redis::connection_config cc;
    cc.address = std::move(address);
    cc.client_name = cfg.client_name.empty() ? std::string() : cfg.client_name + ":cli";
    cc.connect_timeout = cfg.connect_timeout;
    cc.tls = cfg.tls;
    return cc;
}

}  // namespace

std::vector<std::unique_ptr<redis::detail::node_link>> open_node_links(
    const redis::detail::serial_executor& strand, const client_config& cfg) {
    // A cluster link makes the configurations of the masters it meets later, maybe after `cfg` is gone.
    auto shared_cfg = std::make_shared<const client_config>(cfg);
    const auto config_for = [shared_cfg](const redis::node_address& a) {
        return connection_config_for(*shared_cfg, a);
    };
    std::vector<std::unique_ptr<redis::detail::node_link>> out;
    for (const auto& spec : cfg.node_specs()) {
        out.push_back(std::make_unique<redis::detail::node_link>(strand, spec, config_for));
        out.back()->start();
    }
    return out;
}

std::unique_ptr<redis::connection> make_connection(const boost::asio::any_io_executor& ex,
                                                   const client_config& cfg, redis::node_address address) {
    return std::make_unique<redis::connection>(ex, connection_config_for(cfg, std::move(address)));
}

std::string lock_key_of(const client_config& cfg, const std::string& resource) {
    return "{" + cfg.key_prefix + resource + "}:lock";
}

}  // namespace redlock::cli
