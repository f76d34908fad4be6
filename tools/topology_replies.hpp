// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_TOOLS_TOPOLOGY_REPLIES_HPP
#define REDLOCK_TOOLS_TOPOLOGY_REPLIES_HPP

// What `redlock check` asks a cluster's seed and a sentinel, and how it reads their replies into
// reports (I/O-free; topology_probe.cpp sends and receives). A reply of an unexpected shape (an
// old server, an error, an ACL) is never a crash: it is recorded with the server's words.

#include "deployment_check.hpp"
#include <redlock/resp/request.hpp>
#include <redlock/resp/value.hpp>

#include <string>
#include <vector>

namespace redlock::cli {

/// CLUSTER SLOTS, CLUSTER NODES, CLUSTER INFO, CONFIG GET cluster-node-timeout, CLUSTER SHARDS.
resp::request cluster_request();

/// Reads a seed's replies to cluster_request() into `r` (masters, unserved slots, state, node
/// timeout, replicas, and each reply's error). The map is CLUSTER SLOTS', or CLUSTER SHARDS' when
/// the server refuses SLOTS (ports: the TLS ones when `tls`). A master the seed names without a
/// host ("" or "?") is at `seed_host`. False, with why in `why` (the server's words), if neither
/// gave a map: `r` is then unchanged.
bool read_cluster_replies(const std::vector<resp::value>& replies, const std::string& seed_host, bool tls,
                          cluster_report& r, std::string& why);

/// SENTINEL MASTER, SENTINEL CKQUORUM, SENTINEL GET-MASTER-ADDR-BY-NAME, of `master_name`.
resp::request sentinel_request(const std::string& master_name);

/// Reads a sentinel's replies to sentinel_request() into `a` (marked reachable).
void read_sentinel_replies(const std::vector<resp::value>& replies, sentinel_answer& a);

/// The master that the most sentinels of `r` name (the first named among equals) into
/// r.master_host and r.master_port; left empty if none names one.
void choose_master(sentinel_report& r);

}  // namespace redlock::cli

#endif
