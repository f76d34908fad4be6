// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_REDIS_TLS_SETUP_HPP
#define REDLOCK_REDIS_TLS_SETUP_HPP

// The TLS parts of a rediss:// connection that are not I/O: the context made from tls_config,
// the name sent as SNI and checked, and what a failure is called. connection.cpp does the
// handshake itself.

#include <redlock/redis/node_address.hpp>
#include <redlock/tls_config.hpp>

#include <boost/asio/ssl/context.hpp>
#include <boost/system/error_code.hpp>

#include <memory>
#include <string>

namespace redlock::redis::detail {

/// A client context that trusts tls.ca_file (or the system's CAs), offers TLS 1.2 and up, and
/// presents tls.cert_file/key_file if given. Null on failure, with `why` naming the file.
[[nodiscard]] std::unique_ptr<boost::asio::ssl::context> make_tls_context(const tls_config& tls,
                                                                          std::string& why);

/// The name sent as SNI and checked against the certificate: tls.server_name, or the host.
[[nodiscard]] std::string tls_peer_name(const tls_config& tls, const node_address& address);

/// Why the TLS handshake failed: the error, and the certificate check's verdict if it failed.
[[nodiscard]] std::string tls_handshake_failure(const boost::system::error_code& ec, long verify_result,
                                                bool verify, const std::string& name);

/// Whether an error of the first exchange after the TLS handshake is the server refusing us
/// (TLS 1.3 checks the client's certificate only then): a TLS alert, or the connection's end.
[[nodiscard]] bool is_tls_refusal(const boost::system::error_code& ec);

}  // namespace redlock::redis::detail

#endif
