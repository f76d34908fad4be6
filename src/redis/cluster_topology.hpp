// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_REDIS_CLUSTER_TOPOLOGY_HPP
#define REDLOCK_REDIS_CLUSTER_TOPOLOGY_HPP

#include "redis/address_map.hpp"
#include <redlock/redis/node_address.hpp>
#include <redlock/resp/request.hpp>
#include <redlock/resp/value.hpp>

#include <boost/system/error_code.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::redis::detail {

/// "host:port" of a cluster node: how the cluster names it, and the key its connection and its
/// health are kept under.
[[nodiscard]] inline std::string endpoint(const node_address& a) {
    return a.host + ":" + std::to_string(a.port);
}

/// Which master serves each slot of a cluster, as a CLUSTER SLOTS reply and the MOVED replies
/// since said. No I/O: the cluster link asks and follows.
class slot_map {
public:
    slot_map();

    /// Index into masters() of the master serving `slot`; empty: none known.
    [[nodiscard]] std::optional<std::size_t> master_of(std::uint16_t slot) const noexcept;
    [[nodiscard]] const std::vector<node_address>& masters() const noexcept { return masters_; }
    /// Slots no master serves.
    [[nodiscard]] std::size_t unserved() const noexcept;
    [[nodiscard]] bool empty() const noexcept { return masters_.empty(); }
    /// Whether a master at `address`'s host and port serves any slot.
    [[nodiscard]] bool has_master(const node_address& address) const noexcept;
    /// Index of the master at `address`'s host and port, added if new.
    std::size_t master_at(const node_address& address);
    /// Serves slots [first, last] from the master at `address`.
    void assign(std::uint16_t first, std::uint16_t last, const node_address& address);

private:
    std::vector<std::int32_t> owner_;  // per slot: index into masters_, or -1
    std::vector<node_address> masters_;
};

/// Which masters are new, for the failover quarantine of a client that sees the switch: a master
/// is new when neither the current map nor the reference names it. The reference is the last
/// map read that served at least as many slots as the reference before it: a map read while a
/// failover was under way, or from a node that lags, may lack masters (or be empty), and those
/// are not new when the next whole map names them again. A master that left a whole map (a
/// demoted one) and comes back is new. No I/O.
class master_reference {
public:
    /// The masters of `next` that are new against `current` and the reference (none for the
    /// first map); then `next` becomes the reference unless it serves fewer slots.
    std::vector<node_address> on_map(const slot_map& next, const slot_map& current);
    /// Whether the master at `address` is known: in `current` or in the reference.
    [[nodiscard]] bool knows(const node_address& address, const slot_map& current) const;

private:
    bool first_ = true;
    std::vector<node_address> masters_;
    std::size_t unserved_ = 0;
};

/// Reads a CLUSTER SLOTS reply from `asked` into `out` (which it replaces). Every master gets
/// `asked`'s transport, credentials and database; an endpoint the server does not know ("" or
/// "?") is `asked`'s host. A reply of another shape is error::unexpected_reply with `why`.
/// Each master's address goes through `remap` (client_config::address_map).
boost::system::error_code read_cluster_slots(const resp::value& reply, const node_address& asked,
                                             slot_map& out, std::string& why, const address_map& remap = {});

/// A MOVED (the slot lives elsewhere now) or ASK (this one key is being migrated: ask the other
/// node once, after ASKING) error reply.
struct redirect {
    bool ask = false;
    std::uint16_t slot = 0;
    std::string host;  ///< empty: the host of the node that answered
    unsigned short port = 0;
};

/// The redirect that `reply` is, if it is one.
[[nodiscard]] std::optional<redirect> read_redirect(const resp::value& reply);

/// The commands of `payload` (encoded requests) each preceded by ASKING, which lets an importing
/// node serve the next command for a slot it does not own yet. Empty if `payload` does not parse.
[[nodiscard]] std::optional<resp::request> asking_before_each(std::string_view payload);

}  // namespace redlock::redis::detail

#endif
