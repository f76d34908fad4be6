#ifndef REDLOCK_TOOLS_NODE_CONNECTIONS_HPP
#define REDLOCK_TOOLS_NODE_CONNECTIONS_HPP

#include <redlock/config.hpp>
#include <redlock/redis/connection.hpp>
#include <redlock/redis/node_address.hpp>
#include <redlock/redis/node_spec.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <memory>
#include <string>
#include <vector>

namespace redlock::cli {

/// One connection per node of `cfg`, for the command's own questions to the nodes (the lock
/// client keeps its connections to itself). Connecting starts at once, in the background.
/// A cluster or Sentinel node is a usage_error: what these read (a resource's keys) is one server's.
std::vector<std::unique_ptr<redis::connection>> open_node_connections(const boost::asio::any_io_executor& ex,
                                                                      const client_config& cfg);

/// A connection to `address` for the command's own questions: `cfg`'s client name (with
/// ":cli"), connect timeout and TLS settings. Not started.
std::unique_ptr<redis::connection> make_connection(const boost::asio::any_io_executor& ex,
                                                   const client_config& cfg, redis::node_address address);

/// The key of `resource`'s lock (see client_config::key_prefix).
std::string lock_key_of(const client_config& cfg, const std::string& resource);

}  // namespace redlock::cli

#endif
