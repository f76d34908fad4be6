// SPDX-License-Identifier: BSL-1.0
#include <redlock/error.hpp>

#include <cstdio>
#include <string>

namespace redlock {
namespace {

class redlock_category final : public boost::system::error_category {
public:
    const char* name() const noexcept override { return "redlock"; }

    std::string message(int ev) const override { return describe(static_cast<error>(ev)); }

    char const* message(int ev, char* buffer, std::size_t len) const noexcept override {
        // describe() returns string literals, so no allocation happens on this path.
        const char* text = describe(static_cast<error>(ev));
        if (len > 0) {
            std::snprintf(buffer, len, "%s", text);
        }
        return buffer;
    }

private:
    static const char* describe(error e) noexcept {
        switch (e) {
            case error::not_acquired:
                return "the resource is held by another owner";
            case error::wait_timeout:
                return "the wait for the resource timed out";
            case error::quorum_unreachable:
                return "too many nodes failed or timed out to reach a quorum";
            case error::validity_expired:
                return "a quorum was reached only after the lease's validity ran out";
            case error::lock_lost:
                return "the lease could not be kept alive on a quorum and was lost";
            case error::not_owner:
                return "the lease is not held by this owner";
            case error::invalid_ttl:
                return "the ttl is zero, negative or above the configured maximum";
            case error::invalid_config:
                return "the configuration is invalid";
            case error::server_error:
                return "the server answered with an error reply";
            case error::invalid_resource:
                return "the resource name is empty or longer than 1024 bytes";
            case error::stale_fence:
                return "the write was refused: a higher fence was seen for the resource";
            case error::node_quarantined:
                return "the node restarted less than max_ttl ago and does not vote yet";
            case error::not_replicated:
                return "too few replicas acknowledged the lock";
            case error::permits_mismatch:
                return "the semaphore's permits are in use under another permit count";
            case error::client_closed:
                return "the client is closed (client::async_close): no new operation starts";
            case error::handed_over:
                return "the lease was handed over and adopted by another holder: it no longer holds the lock";
            case error::upgrade_refused:
                return "the owner reads the resource: a read lock is not upgraded to a write lock";
            case error::invalid_uri:
                return "the node URI is invalid";
            case error::connect_timeout:
                return "connecting to the server timed out";
            case error::auth_failed:
                return "the server refused the credentials";
            case error::handshake_failed:
                return "a connection setup command failed";
            case error::request_timeout:
                return "the request timed out before its reply arrived";
            case error::reply_lost:
                return "the connection was lost after the request was written; it may have run on the server";
            case error::health_check_failed:
                return "the server stopped answering health checks";
            case error::connection_closed:
                return "the connection was closed";
            case error::queue_full:
                return "the connection's request queue is full (max_queued_requests): back off and retry";
            case error::master_not_found:
                return "no master found: no sentinel named one, or the server named is not a master";
            case error::tls_failed:
                return "TLS could not be set up with the server (certificates, handshake or verification)";
            case error::unexpected_reply:
                return "the server's reply has an unexpected type or shape";
            case error::protocol_error:
                return "malformed RESP data from the server";
            case error::resp_invalid_type:
                return "RESP: invalid type byte";
            case error::resp_invalid_number:
                return "RESP: invalid number";
            case error::resp_length_overflow:
                return "RESP: number overflows 64 bits";
            case error::resp_line_too_long:
                return "RESP: line longer than the configured limit";
            case error::resp_bulk_too_large:
                return "RESP: bulk string longer than the configured limit";
            case error::resp_aggregate_too_large:
                return "RESP: aggregate has more elements than the configured limit";
            case error::resp_nesting_too_deep:
                return "RESP: aggregates nested deeper than the configured limit";
            case error::resp_missing_crlf:
                return "RESP: bulk payload not terminated by CRLF";
            case error::resp_reply_too_large:
                return "RESP: reply takes more memory than the configured limit";
            case error::internal:
                return "internal error in redlock (a library invariant failed)";
        }
        return "unknown redlock error";
    }
};

}  // namespace

const char* error_name(error e) noexcept {
    switch (e) {
        case error::not_acquired:
            return "not_acquired";
        case error::wait_timeout:
            return "wait_timeout";
        case error::quorum_unreachable:
            return "quorum_unreachable";
        case error::validity_expired:
            return "validity_expired";
        case error::lock_lost:
            return "lock_lost";
        case error::not_owner:
            return "not_owner";
        case error::invalid_ttl:
            return "invalid_ttl";
        case error::invalid_config:
            return "invalid_config";
        case error::server_error:
            return "server_error";
        case error::invalid_resource:
            return "invalid_resource";
        case error::stale_fence:
            return "stale_fence";
        case error::node_quarantined:
            return "node_quarantined";
        case error::not_replicated:
            return "not_replicated";
        case error::permits_mismatch:
            return "permits_mismatch";
        case error::upgrade_refused:
            return "upgrade_refused";
        case error::client_closed:
            return "client_closed";
        case error::handed_over:
            return "handed_over";
        case error::invalid_uri:
            return "invalid_uri";
        case error::connect_timeout:
            return "connect_timeout";
        case error::auth_failed:
            return "auth_failed";
        case error::handshake_failed:
            return "handshake_failed";
        case error::request_timeout:
            return "request_timeout";
        case error::reply_lost:
            return "reply_lost";
        case error::health_check_failed:
            return "health_check_failed";
        case error::tls_failed:
            return "tls_failed";
        case error::queue_full:
            return "queue_full";
        case error::master_not_found:
            return "master_not_found";
        case error::connection_closed:
            return "connection_closed";
        case error::unexpected_reply:
            return "unexpected_reply";
        case error::protocol_error:
            return "protocol_error";
        case error::resp_invalid_type:
            return "resp_invalid_type";
        case error::resp_invalid_number:
            return "resp_invalid_number";
        case error::resp_length_overflow:
            return "resp_length_overflow";
        case error::resp_line_too_long:
            return "resp_line_too_long";
        case error::resp_bulk_too_large:
            return "resp_bulk_too_large";
        case error::resp_aggregate_too_large:
            return "resp_aggregate_too_large";
        case error::resp_nesting_too_deep:
            return "resp_nesting_too_deep";
        case error::resp_missing_crlf:
            return "resp_missing_crlf";
        case error::resp_reply_too_large:
            return "resp_reply_too_large";
        case error::internal:
            return "internal";
    }
    return "unknown";
}

const boost::system::error_category& error_category() noexcept {
    static const redlock_category instance;
    return instance;
}

}  // namespace redlock
