// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_REDIS_CLUSTER_SHARDS_HPP
#define REDLOCK_REDIS_CLUSTER_SHARDS_HPP

#include "redis/address_map.hpp"
#include "redis/cluster_topology.hpp"
#include <redlock/redis/node_address.hpp>
#include <redlock/resp/value.hpp>

#include <boost/system/error_code.hpp>

#include <string>

namespace redlock::redis::detail {

/// Reads a CLUSTER SHARDS reply (Redis >= 7.0; CLUSTER SLOTS is deprecated there) from `asked`
/// into `out` (which it replaces), as read_cluster_slots does a CLUSTER SLOTS reply: each shard's
/// node of role "master" serves the shard's slots. A master's address is its "endpoint" (as
/// CLUSTER SLOTS would name it; "?" or "": `asked`'s host) and, when `asked` is a TLS connection,
/// its "tls-port" where it has one. Shards and nodes may be RESP3 maps or RESP2 arrays of key,
/// value, ...; keys not listed here are ignored. A reply of another shape is
/// error::unexpected_reply with `why`.
boost::system::error_code read_cluster_shards(const resp::value& reply, const node_address& asked,
                                              slot_map& out, std::string& why, const address_map& remap = {});

}  // namespace redlock::redis::detail

#endif
