// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_TOOLS_TOPOLOGY_CHECK_HPP
#define REDLOCK_TOOLS_TOPOLOGY_CHECK_HPP

// The verdicts of `redlock check` on a cluster voter and on a Sentinel voter (I/O-free; see
// check_deployment, which calls them, and topology_probe.hpp, which gathers their input).

#include "deployment_check.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace redlock::cli {

/// "nodes[i] master host:port": how findings name a master of voter i.
std::string master_label(std::size_t voter, const std::string& host, std::uint16_t port);

/// The slot map's coverage, the cluster's state, masters without a replica, a failover that can
/// come within a lease; then every master as a server (check_server).
void check_cluster(const client_config& cfg, std::size_t voter, const cluster_report& c,
                   std::vector<finding>& out);

/// Sentinels that do not answer, too few of them, a master name none knows, sentinels that name
/// different masters, CKQUORUM, a master without a replica, a failover that can come within a
/// lease; then the master they name as a server (check_server).
void check_sentinel(const client_config& cfg, std::size_t voter, const sentinel_report& s,
                    std::vector<finding>& out);

}  // namespace redlock::cli

#endif
