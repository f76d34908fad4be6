// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_REDIS_ADDRESS_MAP_HPP
#define REDLOCK_REDIS_ADDRESS_MAP_HPP

#include <redlock/redis/node_address.hpp>

#include <boost/system/error_code.hpp>

#include <map>
#include <optional>
#include <string>
#include <utility>

namespace redlock::redis::detail {

/// Where to connect instead of an address a cluster or the sentinels announce, for servers
/// behind NAT or in containers (client_config::address_map): "host:port" -> "host:port" replaces
/// both, "host" -> "host" the host alone, keeping the port; an exact "host:port" entry comes
/// before a "host" one. No I/O.
class address_map {
public:
    address_map() = default;
    /// Reads `entries` (FROM -> TO); error::invalid_config with `why` naming a bad entry.
    static boost::system::error_code parse(const std::map<std::string, std::string>& entries,
                                           address_map& out, std::string& why);
    /// `a` with the host and port its entry gives, if any; the rest of `a` (transport,
    /// credentials, database) kept.
    [[nodiscard]] node_address apply(node_address a) const;
    [[nodiscard]] bool empty() const noexcept { return by_endpoint_.empty() && by_host_.empty(); }

private:
    struct target {
        std::string host;
        std::optional<unsigned short> port;  // none: keep the announced one
    };
    std::map<std::pair<std::string, unsigned short>, target> by_endpoint_;
    std::map<std::string, target> by_host_;
};

}  // namespace redlock::redis::detail

#endif
