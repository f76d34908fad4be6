// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_TOOLS_TOPOLOGY_PROBE_HPP
#define REDLOCK_TOOLS_TOPOLOGY_PROBE_HPP

// What `redlock check` asks a cluster's seeds and a Sentinel voter's sentinels, before it probes
// the servers they lead to (check_command.cpp).

#include "deployment_check.hpp"
#include <redlock/config.hpp>
#include <redlock/redis/node_spec.hpp>

#include <vector>

namespace redlock::cli {

/// The reports of `specs` (the nodes of `cfg`, in order), each of its kind, named but empty;
/// those of clusters and Sentinel voters then filled in: every seed of a cluster is asked for
/// the slot map and the cluster's state (the first seed, in the URI's order, that gives a map
/// is the one read), every sentinel about the master (logged in to with the node's
/// sentinel_username and sentinel_password, if any: the URI's credentials are the master's).
/// All at once, each within cfg's connect_timeout and 2 s for the answers. No server is probed
/// yet.
std::vector<voter_report> probe_topologies(const client_config& cfg,
                                           const std::vector<redis::node_spec>& specs);

}  // namespace redlock::cli

#endif
