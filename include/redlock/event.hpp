// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_EVENT_HPP
#define REDLOCK_EVENT_HPP

#include <redlock/export.hpp>

#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

namespace redlock {

/// What happened (client_config::on_event).
enum class event_kind : std::uint8_t {
    acquired,          ///< a lease was granted (`resource`; `duration`: from the call to the grant)
    released,          ///< a lease ended by its release, its drop, or client::async_close
                       ///< (`duration`: how long it was held; `error`: client_closed for a lease
                       ///< the close kept until its ttl)
    lease_lost,        ///< a lease could not be kept on a quorum (`error`: lock_lost or not_owner;
                       ///< `detail`: why)
    extend_failed,     ///< an extension failed and the lease keeps its old validity (`error`)
    watchdog_stopped,  ///< a lease's watchdog stopped, because the lease ended (`error` as the
                       ///< lease's end: success, lock_lost, client_closed)
    node_down,         ///< a node's connection failed or dropped (`node`; `error`, `detail`); once
                       ///< until it is up again
    node_up,           ///< a node's connection is up, its handshake done (`detail`: the server)
    node_quarantined,  ///< a node (re)started less than max_ttl ago: its grants do not count for
                       ///< `duration` (restart or failover quarantine, `detail`)
    node_voting,       ///< a node (or a cluster node's master) whose quarantine was announced votes
                       ///< again (seen at its next grant; `detail`: a cluster master's address)
    cluster_redirect,  ///< a request to a cluster node followed a MOVED or an ASK reply (`detail`:
                       ///< "MOVED slot 1234 to 10.0.0.3:7002"; counted in node_metrics too)
};

/// One event, as client_config::on_event hears it.
struct REDLOCK_API event {
    event_kind kind = event_kind::acquired;
    std::string resource;                   ///< lease events: the resource (several: "a,b")
    std::size_t node = 0;                   ///< node events: the node's index in client_config::nodes
    std::string node_name;                  ///< node events: the node as configured
    boost::system::error_code error;        ///< see event_kind
    std::chrono::milliseconds duration{0};  ///< see event_kind
    std::string detail;                     ///< words for a person
};

/// "acquired", "node_down", ...
[[nodiscard]] REDLOCK_API const char* event_kind_name(event_kind kind) noexcept;
/// One line for a log: the kind, then the resource or the node, and what else the event says,
/// e.g. `lease_lost orders:42: lock_lost (a majority of nodes no longer hold our token)`.
[[nodiscard]] REDLOCK_API std::string to_string(const event& e);

}  // namespace redlock

#endif
