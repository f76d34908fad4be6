// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_TOOLS_NODE_CONNECTIONS_HPP
#define REDLOCK_TOOLS_NODE_CONNECTIONS_HPP

#include "redis/serial_executor.hpp"
#include <redlock/config.hpp>
#include <redlock/redis/connection.hpp>
#include <redlock/redis/node_address.hpp>
#include <redlock/redis/node_spec.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <memory>
#include <string>
#include <vector>

namespace redlock::redis::detail {
class node_link;
}

namespace redlock::cli {

/// One link per node of `cfg`, for the command's own questions about a resource's keys (the
/// lock client keeps its connections to itself): the library's own (redis::detail::node_link),
/// so a request goes where the client's would: to the server, to the master of the key's slot
/// in a cluster, or to the master a Sentinel node's sentinels name (logged in to with the
/// node's sentinel credentials). Each connection is made as make_connection() makes it.
/// Connecting starts at once, in the background.
std::vector<std::unique_ptr<redis::detail::node_link>> open_node_links(
    const redis::detail::serial_executor& strand, const client_config& cfg);

/// A connection to `address` for the command's own questions: `cfg`'s client name (with
/// ":cli"), connect timeout and TLS settings. Not started.
std::unique_ptr<redis::connection> make_connection(const boost::asio::any_io_executor& ex,
                                                   const client_config& cfg, redis::node_address address);

/// The key of `resource`'s lock (see client_config::key_prefix).
std::string lock_key_of(const client_config& cfg, const std::string& resource);

}  // namespace redlock::cli

#endif
