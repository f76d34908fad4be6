// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_REDIS_NODE_SPEC_HPP
#define REDLOCK_REDIS_NODE_SPEC_HPP

#include <redlock/export.hpp>
#include <redlock/redis/node_address.hpp>

#include <boost/system/error_code.hpp>

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::redis {

/// One voter of a Redlock quorum, as its URI names it: a single server, a Redis Cluster, or a
/// master watched by Sentinel.
///   redis://... rediss://... unix://...                      one server (see parse_node_uri)
///   redis-cluster://[[user]:password@]host:port[,host:port...]   a cluster, by seed nodes
///   rediss-cluster://...                                     the same over TLS
///   redis-sentinel://[[user]:password@]host:port[,host:port...][/db]#master-name
///   rediss-sentinel://...                                    the same over TLS: to the
///                                                            sentinels and to the master
/// A cluster has only database 0. The credentials of a cluster URI log in to every node of the
/// cluster; those of a Sentinel URI to the master it names (the sentinels' own are not in the
/// URI). The port is required in the multi-host forms.
struct REDLOCK_API node_spec {
    enum class topology { server, cluster, sentinel };

    topology kind = topology::server;
    /// server: the one server; cluster: the seed nodes; sentinel: the sentinels. Each carries
    /// the URI's credentials and database.
    std::vector<node_address> addresses;
    std::string master_name;  ///< sentinel: the name the sentinels know the master by
    /// sentinel: how to log in to the sentinels; not in the URI (client_config::per_node).
    std::string sentinel_username;
    std::string sentinel_password;
    /// cluster and sentinel: client_config::address_map, applied to the addresses they announce.
    std::map<std::string, std::string> address_map;

    /// The URI without the password, for logs and error messages.
    [[nodiscard]] std::string to_string() const;

    friend bool operator==(const node_spec&, const node_spec&) = default;
};

/// Parses `uri` into `out`. On failure returns error::invalid_uri and sets `why` to a message
/// naming the URI (password masked) and what is wrong with it; `out` is then unspecified.
REDLOCK_API boost::system::error_code parse_node_spec(std::string_view uri, node_spec& out, std::string& why);

/// A comma-separated list of node URIs, as a command line or an environment variable writes it,
/// split into URIs: a piece without "://" after a cluster or Sentinel URI is one more of its
/// hosts ("redis-cluster://a:1,b:2,redis://c:3" is two nodes). Empty pieces are dropped.
REDLOCK_API std::vector<std::string> split_node_list(std::string_view text);

}  // namespace redlock::redis

#endif
