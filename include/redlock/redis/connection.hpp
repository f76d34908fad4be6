// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_REDIS_CONNECTION_HPP
#define REDLOCK_REDIS_CONNECTION_HPP

#include <redlock/export.hpp>
#include <redlock/redis/node_address.hpp>
#include <redlock/redis/script.hpp>
#include <redlock/resp/parser_limits.hpp>
#include <redlock/resp/request.hpp>
#include <redlock/resp/value.hpp>
#include <redlock/tls_config.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::redis {

namespace asio = boost::asio;
using boost::system::error_code;

/// How one connection to one Redis server behaves. Defaults suit a lock client on a LAN.
struct REDLOCK_API connection_config {
    node_address address;
    std::string client_name = "redlock";  ///< CLIENT SETNAME; empty: none
    /// Resolve + connect + handshake must finish within this, or the attempt fails with connect_timeout.
    std::chrono::milliseconds connect_timeout{1000};
    /// PING when idle this long; the connection is declared dead when a reply is owed and nothing
    /// arrived for two intervals. Must exceed the slowest command you send. Zero disables it.
    std::chrono::milliseconds health_check_interval{2000};
    /// Reconnect delays grow from min to max (doubling, with jitter in [delay/2, delay]).
    std::chrono::milliseconds reconnect_min_delay{50};
    std::chrono::milliseconds reconnect_max_delay{2000};
    /// Loaded with SCRIPT LOAD in the setup that runs on every (re)connect.
    std::vector<script> scripts;
    /// The oldest server this connection accepts, as "major.minor" (a lock client asks for
    /// "7.0": SET ... NX GET); empty: any. Read from HELLO's reply: an older server
    /// fails the handshake with handshake_failed and a message that names its version, so that
    /// it is not the cause of a server_error on every command. A server without HELLO (RESP2),
    /// or one whose HELLO does not say its version, is not checked.
    std::string min_server_version;
    /// Called on the connection's strand with every RESP3 push (pub/sub messages, subscribe
    /// confirmations); without it pushes are counted in stats().pushes_dropped.
    std::function<void(const resp::value&)> on_push;
    /// Called on the connection's strand after every successful handshake, before queued
    /// requests are written: the place to subscribe again after a reconnect.
    std::function<void()> on_connect;
    /// Called on the connection's strand when the connection goes down: a connected one that
    /// drops, or an attempt that fails after the last one that succeeded (the first attempt
    /// too); once until the next successful handshake. With the error and last_error()'s
    /// message. Not on close().
    std::function<void(error_code, std::string_view)> on_disconnect;
    /// If set, every handshake also sends `INFO server` and passes the reply's text here, on the
    /// connection's strand, before on_connect and before any queued request is written: what a
    /// request on this connection meets is the server process described (run_id, uptime).
    std::function<void(std::string_view)> on_server_info;
    /// Commands added to every handshake's setup, after INFO server. Their replies go to
    /// on_setup_replies on the connection's strand, before on_server_info; an error reply among
    /// them does not fail the handshake (it is the callback's to judge).
    std::vector<std::vector<std::string>> setup_commands;
    std::function<void(const std::vector<resp::value>&)> on_setup_replies;
    resp::parser_limits limits;
    /// Requests queued and not yet answered (written or not) beyond which async_exec fails at
    /// once with error::queue_full: back-pressure instead of unbounded memory while a server is
    /// slow or away. Zero: no limit.
    std::size_t max_queued_requests = 100000;
    /// For a `rediss://` address: CA, client certificate, name to verify. Ignored otherwise.
    tls_config tls;
    /// Where to connect, asked before every connection attempt (a master that Sentinel names);
    /// without it, `address`. Called on the connection's strand with the time the answer may
    /// take (half of connect_timeout, which bounds the whole attempt); the handler gets the
    /// address to use (with its credentials and database) or an error and a message, which
    /// fails the attempt as a connect failure does.
    using locate_handler = asio::any_completion_handler<void(error_code, node_address, std::string)>;
    std::function<void(std::chrono::milliseconds, locate_handler)> locate;
    /// The handshake also asks ROLE and fails with error::master_not_found unless the server
    /// says it is a master: a lock must not be taken on a replica that used to be the master.
    /// A READONLY reply (a master demoted while connected) then makes it connect again at once,
    /// asking `locate` anew.
    bool require_master = false;
};

/// What went wrong last on this connection, with the server's own words where there are any.
struct REDLOCK_API connection_error {
    error_code code;
    std::string message;
    /// The server refused what no retry changes: the credentials or an ACL permission, a
    /// command it does not have (renamed or disabled), a database it lacks, or its version is
    /// below the floor; over TLS, a server certificate that does not verify, a client
    /// certificate the server refuses, TLS files that do not load. The connection still tries again (the
    /// server's configuration may be fixed), but a caller that waits for it need not.
    bool permanent = false;
};

/// Counters, for tests, metrics and the demo.
struct REDLOCK_API connection_stats {
    std::uint64_t connects = 0;             ///< handshakes that succeeded
    std::uint64_t connect_failures = 0;     ///< attempts that failed (connect, auth, setup, timeout)
    std::uint64_t disconnects = 0;          ///< established connections that were lost
    std::uint64_t writes = 0;               ///< socket writes (each may carry many requests)
    std::uint64_t pushes_dropped = 0;       ///< RESP3 pushes nobody consumed
    std::uint64_t rejected_queue_full = 0;  ///< async_exec calls refused with queue_full
};

/// One pipelined connection to one Redis server (RESP3 with HELLO 3, RESP2 fallback).
///
/// Requests from any number of coroutines share it: those queued while a write is in flight
/// leave together in the next single write, and replies are matched in FIFO order. When the
/// connection drops it reconnects with capped exponential backoff and jitter; requests that
/// were written but not answered then fail with `error::reply_lost` (they may have run), and
/// requests not yet written wait for the next connection.
///
/// \par Thread-safety
/// All members may be called from any thread. State lives on an internal strand; completion
/// handlers run on their associated executor (the connection's executor by default). When the
/// executor given to the constructor is a strand (a `strand<any_io_executor>`, or a strand of an
/// `io_context`'s executor held in an `any_io_executor`), the connection uses that strand as its own:
/// requests made on it are queued without a hop, and completions bound to it run without one, so several
/// connections driven by one strand cost no cross-strand posts.
///
/// \par Object lifetimes
/// The connection may be destroyed while operations are pending: they complete with
/// `error::connection_closed`. Request bytes are copied at initiation.
class REDLOCK_API connection {
public:
    using executor_type = asio::any_io_executor;

    connection(executor_type ex, connection_config cfg);
    ~connection();
    connection(const connection&) = delete;
    connection& operator=(const connection&) = delete;

    [[nodiscard]] executor_type get_executor() const noexcept;
    [[nodiscard]] const connection_config& config() const noexcept;

    /// Starts the connection's background work (connect, handshake, reconnect) if not started,
    /// and completes with the result of the current or next connection attempt, or at once if
    /// connected. A failed attempt is retried in the background until close(); the message of
    /// the failure (the server's text for auth and setup errors) is in last_error().
    ///
    /// Handler signature: `void(error_code)`. Errors: connect_timeout, auth_failed,
    /// handshake_failed, connection_closed, protocol errors, socket errors.
    /// Per-operation cancellation: terminal, partial, total: only this wait is cancelled
    /// (operation_aborted); the background connection goes on.
    template <class CompletionToken = asio::deferred_t>
    auto async_connect(CompletionToken&& token = {}) {
        return asio::async_initiate<CompletionToken, void(error_code)>(connect_initiation{this}, token);
    }

    /// Sends every command of `req` and completes with their replies, one per command, in order.
    /// A server error reply is a value of type `resp::type::error`, not a failure of the request.
    ///
    /// Handler signature: `void(error_code, std::vector<resp::value>)`.
    /// Errors: request_timeout (its `timeout` ran out, counted from the end of the first
    /// connection attempt for a request sent during it; zero means none), reply_lost (written,
    /// then the connection dropped: it may have run), connection_closed, protocol errors
    /// (the reply stream was malformed: the connection is reset), unexpected_reply.
    /// Per-operation cancellation: terminal and partial cancel it at any point: a request not
    /// yet written is dropped, a written one is abandoned (its reply is still read and
    /// discarded, never handed to another request). Total cancels it only while not written.
    template <class CompletionToken = asio::deferred_t>
    auto async_exec(const resp::request& req, std::chrono::milliseconds timeout,
                    CompletionToken&& token = {}) {
        return asio::async_initiate<CompletionToken, void(error_code, std::vector<resp::value>)>(
            exec_initiation{this}, token, req.payload(), req.size(), timeout);
    }
    template <class CompletionToken = asio::deferred_t>
    auto async_exec(const resp::request& req, CompletionToken&& token = {}) {
        return async_exec(req, std::chrono::milliseconds::zero(), std::forward<CompletionToken>(token));
    }

    /// Runs a script with EVALSHA; if the server answers NOSCRIPT (SCRIPT FLUSH, a restarted or
    /// failed-over node), runs it once more with EVAL, which also caches it again.
    ///
    /// Handler signature: `void(error_code, resp::value)`: the script's reply, which may be a
    /// server error value (a Lua error). Errors and cancellation as async_exec; the timeout
    /// applies to each of the (at most two) round trips.
    template <class CompletionToken = asio::deferred_t>
    auto async_eval(const script& s, std::span<const std::string_view> keys,
                    std::span<const std::string_view> args, std::chrono::milliseconds timeout,
                    CompletionToken&& token = {}) {
        return asio::async_initiate<CompletionToken, void(error_code, resp::value)>(
            eval_initiation{this}, token, s, make_evalsha(s, keys, args), timeout);
    }

    /// async_exec() and async_eval() with the request already encoded, for a router that may
    /// send one request again elsewhere (a cluster's MOVED): `commands` commands in `payload`;
    /// an EVALSHA of `s` in `evalsha_payload`.
    template <class CompletionToken = asio::deferred_t>
    auto async_exec_encoded(std::string payload, std::size_t commands, std::chrono::milliseconds timeout,
                            CompletionToken&& token = {}) {
        return asio::async_initiate<CompletionToken, void(error_code, std::vector<resp::value>)>(
            exec_initiation{this}, token, std::move(payload), commands, timeout);
    }
    template <class CompletionToken = asio::deferred_t>
    auto async_eval_encoded(const script& s, std::string evalsha_payload, std::chrono::milliseconds timeout,
                            CompletionToken&& token = {}) {
        return asio::async_initiate<CompletionToken, void(error_code, resp::value)>(
            eval_initiation{this}, token, s, std::move(evalsha_payload), timeout);
    }

    /// Queues one SUBSCRIBE or UNSUBSCRIBE of `channels` channels, whose answers arrive as pushes
    /// of kind `push_kind` ("subscribe", "unsubscribe") and go to connection_config::on_push;
    /// nothing waits for them. It keeps its place among the requests: a server that refuses it
    /// (an ACL without `+subscribe` or the channel: -NOPERM) answers with an error, which is
    /// this command's, never another request's. `on_refused` then runs on the connection's
    /// strand with that error (and last_error() names it); the connection goes on. Written with
    /// the next write, or after the next handshake if not connected. On RESP2 (a server without
    /// HELLO) the pub/sub arrays are taken as the pushes they stand for. Bounded as requests
    /// are: with `max_queued_requests` waiting it is not queued, counts in
    /// `rejected_queue_full`, and `on_refused` gets a `QUEUEFULL` error naming the bound.
    void send_subscription(const resp::request& req, std::string push_kind, std::size_t channels,
                           std::function<void(const resp::value&)> on_refused);

    /// Starts the next connection attempt now: a connected connection is dropped as a lost
    /// one (written requests fail with reply_lost, the others wait for the next connection),
    /// one waiting out a reconnect delay stops waiting. For a `locate`d server that moved.
    void reconnect();

    /// Stops reconnecting, closes the socket and completes every pending operation with
    /// `error::connection_closed`. Idempotent.
    void close();

    [[nodiscard]] bool is_connected() const noexcept;
    /// RESP protocol version negotiated by the last handshake (3, or 2 after a fallback).
    [[nodiscard]] int protocol() const noexcept;
    [[nodiscard]] connection_error last_error() const;
    [[nodiscard]] connection_stats stats() const;

private:
    struct impl;

    struct connect_initiation {
        connection* self;
        template <class Handler>
        void operator()(Handler&& h) const {
            self->async_connect_impl(std::forward<Handler>(h));
        }
    };
    struct exec_initiation {
        connection* self;
        template <class Handler>
        void operator()(Handler&& h, std::string payload, std::size_t commands,
                        std::chrono::milliseconds timeout) const {
            self->async_exec_impl(std::move(payload), commands, timeout, std::forward<Handler>(h));
        }
    };
    struct eval_initiation {
        connection* self;
        template <class Handler>
        void operator()(Handler&& h, script s, std::string evalsha_payload,
                        std::chrono::milliseconds timeout) const {
            self->async_eval_impl(s, std::move(evalsha_payload), timeout, std::forward<Handler>(h));
        }
    };

    static std::string make_evalsha(const script& s, std::span<const std::string_view> keys,
                                    std::span<const std::string_view> args);

    void async_connect_impl(asio::any_completion_handler<void(error_code)> h);
    void async_exec_impl(std::string payload, std::size_t commands, std::chrono::milliseconds timeout,
                         asio::any_completion_handler<void(error_code, std::vector<resp::value>)> h);
    void async_eval_impl(script s, std::string evalsha_payload, std::chrono::milliseconds timeout,
                         asio::any_completion_handler<void(error_code, resp::value)> h);

    std::shared_ptr<impl> impl_;
};

}  // namespace redlock::redis

#endif
