// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_ERROR_HPP
#define REDLOCK_ERROR_HPP

#include <redlock/export.hpp>

#include <boost/system/error_category.hpp>
#include <boost/system/error_code.hpp>

#include <type_traits>

namespace redlock {

/// Every failure the library reports has its own value here; the category is "redlock".
/// Server error replies are not errors of the request that carried them: they are values
/// (`resp::value` of type `error`) so that one bad command in a pipeline does not hide the others.
enum class error {
    // Lock level.
    not_acquired = 1,    ///< the resource is held by another owner and the caller asked to try once
    wait_timeout,        ///< the wait for the resource ran out
    quorum_unreachable,  ///< too many nodes failed or timed out to reach N/2+1
    validity_expired,    ///< a quorum granted, but only after the lease's validity ran out
    lock_lost,           ///< a held lease could not be kept alive on a quorum
    not_owner,           ///< extend or release of a lease that is no longer ours
    invalid_ttl,         ///< a ttl that is zero, negative or above the configured maximum
    invalid_config,      ///< a configuration value that cannot be used
    server_error,        ///< the server answered a command with an error reply where none was expected
    invalid_resource,    ///< an empty resource name, or one longer than 1024 bytes
    stale_fence,         ///< a fenced write refused: the resource saw a higher fence
    node_quarantined,    ///< a node that (re)started less than max_ttl ago: its grant did not count
    not_replicated,      ///< fewer replicas than lock_options::replicas acknowledged a grant
    permits_mismatch,    ///< a semaphore's permits are in use under another lock_options::permits
    upgrade_refused,     ///< a write acquire by an owner that holds the resource for reading
    client_closed,       ///< the client is closed or closing (client::async_close): nothing new starts
    handed_over,         ///< the lease was handed over (lease::handover) and adopted elsewhere

    // Connection level.
    invalid_uri,          ///< a node address that does not parse as redis://, rediss:// or unix://
    connect_timeout,      ///< resolve + connect + handshake did not finish in connect_timeout
    auth_failed,          ///< the server refused the credentials (WRONGPASS, NOAUTH, NOPERM)
    handshake_failed,     ///< a setup command (HELLO, SELECT, CLIENT SETNAME, SCRIPT LOAD) failed
    request_timeout,      ///< the request's own timeout ran out before its reply arrived
    reply_lost,           ///< the connection dropped after the request was written: it may have run
    health_check_failed,  ///< the server stopped answering: no bytes for two health-check intervals
    connection_closed,    ///< the connection was closed by its owner; the request never ran
    unexpected_reply,     ///< a well-formed reply of the wrong type or shape
    tls_failed,           ///< TLS could not be set up: certificate files, handshake or verification
    queue_full,           ///< the connection already has max_queued_requests requests waiting: back off
    master_not_found,     ///< Sentinel: no sentinel named a master, or the server named is not one (ROLE)

    // RESP codec: hostile or broken input from the server.
    protocol_error,            ///< malformed RESP (a generic parse failure)
    resp_invalid_type,         ///< a reply starts with a byte that is no RESP2/RESP3 type
    resp_invalid_number,       ///< a length, integer, double or boolean that does not parse
    resp_length_overflow,      ///< a declared length or integer overflows 64 bits
    resp_line_too_long,        ///< a header line (status, error, number, length) exceeds the limit
    resp_bulk_too_large,       ///< a declared bulk length exceeds the limit
    resp_aggregate_too_large,  ///< a declared aggregate element count exceeds the limit
    resp_nesting_too_deep,     ///< aggregates nested deeper than the limit
    resp_missing_crlf,         ///< a bulk payload not followed by CRLF
    resp_reply_too_large,      ///< one reply would take more memory than the limit
                               ///< (parser_limits::max_reply_bytes)

    internal,  ///< a library invariant failed; please report it
};

/// The enumerator's name ("quorum_unreachable"), for logs and tools; "unknown" for other values.
REDLOCK_API const char* error_name(error e) noexcept;

/// The category of `redlock::error`, named "redlock".
REDLOCK_API const boost::system::error_category& error_category() noexcept;

inline boost::system::error_code make_error_code(error e) noexcept {
    return {static_cast<int>(e), error_category()};
}

}  // namespace redlock

namespace boost::system {
template <>
struct is_error_code_enum<::redlock::error> : std::true_type {};
}  // namespace boost::system

#endif
