// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_LOCK_NODES_ANSWERING_SERVER_HPP
#define REDLOCK_LOCK_NODES_ANSWERING_SERVER_HPP

#include "lock/nodes/node_health.hpp"

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace redlock::detail {

/// Why a grant from a Redis Cluster node does not count, judged on the server that made it (the
/// master the request reached, the ASK target, the new master after a MOVED), not on the slot
/// map as it is when the reply is read: the map may lag a failover, still name the old master
/// for a slot, or name nobody. `entry` is the board's entry for that server, if this client has
/// one: a server it never made a connection to (whose identity and failover mark it never read)
/// does not vote. Empty: the grant counts.
[[nodiscard]] std::string why_answer_does_not_count(const node_health_board& board,
                                                    std::optional<std::size_t> entry, std::string_view server,
                                                    std::chrono::steady_clock::time_point now);

/// Why a grant does not count as far as the server's replication ID goes: `info` is the reply of
/// the INFO replication sent right behind the grant on its connection (null: none came), `entry`
/// the board's entry for the server that answered, `server` its name for the message (empty: the
/// node's). Empty when the server has been a master since a failover mark of this client read
/// its ID; otherwise why, after node_health_board::granted_under() has quarantined the entry.
/// `malformed` is set when the reply names no ID (the server's fault, not a quarantine).
[[nodiscard]] std::string why_replication_id_does_not_count(node_health_board& board, std::size_t entry,
                                                            const resp::value* info, std::string_view server,
                                                            bool& malformed);

}  // namespace redlock::detail

#endif
