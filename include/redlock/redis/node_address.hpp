// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_REDIS_NODE_ADDRESS_HPP
#define REDLOCK_REDIS_NODE_ADDRESS_HPP

#include <redlock/export.hpp>

#include <boost/system/error_code.hpp>

#include <string>
#include <string_view>

namespace redlock::redis {

/// Where a node lives and how to log in, parsed from a URI:
///   redis://[[user]:password@]host[:port][/db]     (port 6379, db 0 by default; IPv6 as [::1])
///   rediss://...                                   (same, over TLS)
///   unix://[[user]:password@]/absolute/path[?db=N]
/// User and password may be percent-encoded (%40 for '@', %3A for ':').
struct REDLOCK_API node_address {
    enum class transport { tcp, tls, unix_socket };

    transport kind = transport::tcp;
    std::string host;  ///< tcp/tls: host name or IP literal (without brackets)
    unsigned short port = 6379;
    std::string path;      ///< unix_socket: the socket's path
    std::string username;  ///< empty: the default user
    std::string password;  ///< empty: no AUTH
    int db = 0;

    /// The URI without the password, for logs and error messages.
    [[nodiscard]] std::string to_string() const;

    friend bool operator==(const node_address&, const node_address&) = default;
};

/// Parses `uri` into `out`. On failure returns error::invalid_uri and sets `why` to a message
/// naming the URI (password masked) and what is wrong with it; `out` is then unspecified.
REDLOCK_API boost::system::error_code parse_node_uri(std::string_view uri, node_address& out,
                                                     std::string& why);

}  // namespace redlock::redis

#endif
