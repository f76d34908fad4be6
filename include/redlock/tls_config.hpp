// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_TLS_CONFIG_HPP
#define REDLOCK_TLS_CONFIG_HPP

#include <redlock/export.hpp>

#include <string>

namespace redlock {

/// TLS settings for `rediss://` nodes (OpenSSL through Asio SSL). Ignored for other nodes.
///
/// The server's certificate is verified by default: against `ca_file`, or the system's CAs when
/// it is empty, and its name against `server_name` (or the URI's host). A failure is
/// error::tls_failed with OpenSSL's reason; nothing is ever sent in plaintext instead.
struct REDLOCK_API tls_config {
    /// PEM file of the CA(s) to trust; empty: the system's default CA paths.
    std::string ca_file;
    /// PEM client certificate (chain) and its private key, for servers that ask for one
    /// (`tls-auth-clients yes`). Both or neither.
    std::string cert_file;
    std::string key_file;
    /// The name sent as SNI and checked against the certificate (DNS name or IP address);
    /// empty: the host of the node's URI.
    std::string server_name;
    /// false: accept any certificate (no CA check, no name check). For tests only.
    bool verify = true;
};

}  // namespace redlock

#endif
