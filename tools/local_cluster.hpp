// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_TOOLS_LOCAL_CLUSTER_HPP
#define REDLOCK_TOOLS_LOCAL_CLUSTER_HPP

#include "local_servers.hpp"

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>

namespace redlock::cli {

/// A Redis Cluster of our own (`redlock demo --cluster`): 3 masters with a replica each, in
/// local_servers, formed by `redis-cli --cluster create`, with a short cluster-node-timeout so
/// that a killed master fails over within seconds. Stopped by PID on destruction.
class local_cluster {
public:
    /// Starts the 6 servers, forms the cluster and waits (20 s at most) until every server says
    /// cluster_state:ok; std::runtime_error with what went wrong otherwise.
    explicit local_cluster(std::chrono::milliseconds node_timeout);

    /// "redis-cluster://127.0.0.1:p1,127.0.0.1:p2,...": every server is a seed.
    [[nodiscard]] std::string uri() const;
    /// The server that serves `key` now: the one whose answer to a write of it is not a
    /// redirect. nullopt while no live server serves it (a failover under way).
    [[nodiscard]] std::optional<std::size_t> owner_of(const std::string& key) const;
    [[nodiscard]] std::string address(std::size_t i) const;
    [[nodiscard]] pid_t pid(std::size_t i) const { return servers_.pid(i); }
    /// SIGKILL, as a crash.
    void kill(std::size_t i) { servers_.kill(i); }

private:
    void create();
    void wait_until_ok();

    local_servers servers_;
};

}  // namespace redlock::cli

#endif
