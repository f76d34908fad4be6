#include "node_connections.hpp"

#include "cli_args.hpp"

#include <boost/system/system_error.hpp>

namespace redlock::cli {

std::vector<std::unique_ptr<redis::connection>> open_node_connections(const boost::asio::any_io_executor& ex,
                                                                      const client_config& cfg) {
    std::vector<std::unique_ptr<redis::connection>> out;
    for (const auto& spec : cfg.node_specs()) {
        // What it reads (a resource's keys) is one server's.
        if (spec.kind != redis::node_spec::topology::server)
            throw usage_error(spec.to_string() +
                              ": this command reads single servers; a cluster or Sentinel "
                              "node is not supported by it yet");
        out.push_back(make_connection(ex, cfg, spec.addresses.front()));
        out.back()->async_connect([](boost::system::error_code) {});
    }
    return out;
}

std::unique_ptr<redis::connection> make_connection(const boost::asio::any_io_executor& ex,
                                                   const client_config& cfg, redis::node_address address) {
    redis::connection_config cc;
    cc.address = std::move(address);
    cc.client_name = cfg.client_name.empty() ? std::string() : cfg.client_name + ":cli";
    cc.connect_timeout = cfg.connect_timeout;
    cc.tls = cfg.tls;
    return std::make_unique<redis::connection>(ex, std::move(cc));
}

std::string lock_key_of(const client_config& cfg, const std::string& resource) {
    return "{" + cfg.key_prefix + resource + "}:lock";
}

}  // namespace redlock::cli
