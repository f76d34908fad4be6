// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_REDIS_TRANSPORT_HPP
#define REDLOCK_REDIS_TRANSPORT_HPP

#include "redis/serial_executor.hpp"
#include <redlock/redis/node_address.hpp>
#include <redlock/tls_config.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/generic/stream_protocol.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/system/error_code.hpp>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>

namespace redlock::redis::detail {

/// One connection's byte stream to its node: TCP, TLS over TCP (rediss://) or a unix socket,
/// behind one interface, opened anew for every connection attempt. The connection above it
/// speaks RESP and never asks which of the three it is, except to let TLS records be written by
/// its writer coroutine. On the connection's strand.
class transport {
public:
    using socket_type = boost::asio::generic::stream_protocol::socket;
    using strand_type = serial_executor;
    using io_result = std::tuple<boost::system::error_code, std::size_t>;

    transport(const strand_type& strand, node_address address, tls_config tls);
    ~transport();
    transport(const transport&) = delete;
    transport& operator=(const transport&) = delete;

    /// Opens the stream: resolves a host name, connects (each address in turn), then the TLS
    /// handshake (SNI, the certificate checked against the CA and the name; any failure is
    /// error::tls_failed, and nothing is sent in plaintext). On failure `why` says what failed,
    /// empty if abort() stopped it.
    boost::asio::awaitable<boost::system::error_code> open(std::string& why);
    /// Stops an open() under way and closes the stream: connect_timeout, close(). Asio 1.81
    /// cannot cancel a name lookup under way (getaddrinfo on its own thread): open() stops
    /// waiting for it, and its late answer connects nothing.
    void abort();
    void close();
    /// The node the next open() connects to (a master that moved); not while open.
    void retarget(node_address address) { address_ = std::move(address); }

    [[nodiscard]] bool is_tls() const noexcept { return tls_ != nullptr; }
    /// The last open() was in its TLS handshake when it ended (a plaintext port never answers).
    [[nodiscard]] bool was_handshaking_tls() const noexcept { return tls_handshaking_; }
    /// Whether the last open() failed in a way another attempt meets again: TLS files that do
    /// not load, a server certificate that does not verify.
    [[nodiscard]] bool refused_for_good() const noexcept { return refused_for_good_; }

    /// Writes what the socket takes now, without blocking; TLS writes nothing (a synchronous
    /// SSL_write on a non-blocking socket could stop halfway through a record).
    std::size_t write_now(std::string_view bytes, boost::system::error_code& ec);
    boost::asio::awaitable<io_result> read_some(boost::asio::mutable_buffer buffer);
    boost::asio::awaitable<io_result> write_all(boost::asio::const_buffer bytes);

private:
    boost::asio::awaitable<boost::system::error_code> resolve(
        std::vector<boost::asio::ip::tcp::endpoint>& out, std::string& why);
    boost::asio::awaitable<boost::system::error_code> start_tls(std::string& why);
    [[nodiscard]] std::string node() const { return address_.to_string(); }

    struct lookup_result;

    node_address address_;
    tls_config tls_config_;
    strand_type strand_;
    socket_type socket_;
    boost::asio::ip::tcp::resolver resolver_;
    // A name lookup under way: open() waits on its condition, which the lookup's end and
    // abort() wake. Shared with the lookup's handler, which may run after the transport is gone.
    std::shared_ptr<lookup_result> lookup_;
    // rediss://: TLS over socket_, made anew for every connection (an SSL session cannot be
    // reused on a new socket); its context is made at the first open and kept.
    std::unique_ptr<boost::asio::ssl::context> tls_context_;
    std::unique_ptr<boost::asio::ssl::stream<socket_type&>> tls_;
    bool tls_handshaking_ = false;
    bool refused_for_good_ = false;
    bool aborted_ = false;
};

}  // namespace redlock::redis::detail

#endif
