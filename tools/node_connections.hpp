#ifndef REDLOCK_TOOLS_NODE_CONNECTIONS_HPP
#define REDLOCK_TOOLS_NODE_CONNECTIONS_HPP

#include <redlock/config.hpp>
#include <redlock/redis/connection.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <memory>
#include <string>
#include <vector>

namespace redlock::cli {

/// One connection per node of `cfg`, for the command's own questions to the nodes (the lock
/// client keeps its connections to itself). Connecting starts at once, in the background.
std::vector<std::unique_ptr<redis::connection>> open_node_connections(const boost::asio::any_io_executor& ex,
                                                                      const client_config& cfg);

/// The key of `resource`'s lock (see client_config::key_prefix).
std::string lock_key_of(const client_config& cfg, const std::string& resource);

}  // namespace redlock::cli

#endif
