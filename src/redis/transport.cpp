// SPDX-License-Identifier: BSL-1.0
#include "redis/transport.hpp"

#include "redis/tls_setup.hpp"
#include <redlock/error.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <vector>

namespace redlock::redis::detail {

namespace asio = boost::asio;
using boost::system::error_code;

namespace {
constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);
}  // namespace

struct transport::lookup_result {
    explicit lookup_result(const transport::strand_type& strand) : wake(strand) {}
    asio::steady_timer wake;  // expires at max: a condition woken by cancel()
    bool done = false;
    error_code ec;
    asio::ip::tcp::resolver::results_type endpoints;
};

transport::transport(const strand_type& strand, node_address address, tls_config tls)
    : address_(std::move(address)),
      tls_config_(std::move(tls)),
      strand_(strand),
      socket_(strand),
      resolver_(strand) {}

transport::~transport() = default;

void transport::abort() {
    aborted_ = true;
    resolver_.cancel();
    if (lookup_) lookup_->wake.cancel();
    close();
}

void transport::close() {
    error_code ignored;
    socket_.close(ignored);
}

asio::awaitable<error_code> transport::open(std::string& why) {
    aborted_ = false;
    tls_handshaking_ = false;
    refused_for_good_ = false;
    error_code ec;
    tls_.reset();
    socket_.close(ec);
    if (address_.kind == node_address::transport::unix_socket) {
        asio::local::stream_protocol::endpoint ep(address_.path);
        auto [cec] = co_await socket_.async_connect(socket_type::endpoint_type(ep), use_tuple);
        if (cec) why = "connecting to " + node() + ": " + cec.message();
        if (!cec) socket_.non_blocking(true, ec);  // write_now() writes without blocking
        co_return cec;
    }
    std::vector<asio::ip::tcp::endpoint> endpoints;
    if (auto rec = co_await resolve(endpoints, why)) co_return rec;
    error_code last = asio::error::host_not_found;
    for (const auto& ep : endpoints) {
        if (aborted_) break;
        socket_.close(ec);
        auto [cec] = co_await socket_.async_connect(socket_type::endpoint_type(ep), use_tuple);
        if (!cec) {
            socket_.set_option(asio::ip::tcp::no_delay(true), ec);
            socket_.set_option(asio::socket_base::keep_alive(true), ec);
            socket_.non_blocking(true, ec);  // write_now() writes without blocking
            if (address_.kind == node_address::transport::tls) co_return co_await start_tls(why);
            co_return error_code{};
        }
        last = cec;
    }
    why = "connecting to " + node() + ": " + last.message();
    co_return last;
}

asio::awaitable<error_code> transport::resolve(std::vector<asio::ip::tcp::endpoint>& out, std::string& why) {
    error_code ec;
    auto literal = asio::ip::make_address(address_.host, ec);
    if (!ec) {
        out.emplace_back(literal, address_.port);
        co_return error_code{};
    }
    auto lookup = lookup_ = std::make_shared<lookup_result>(strand_);
    resolver_.async_resolve(address_.host, std::to_string(address_.port),
                            [lookup](error_code rec, asio::ip::tcp::resolver::results_type results) {
                                lookup->done = true;
                                lookup->ec = rec;
                                lookup->endpoints = std::move(results);
                                lookup->wake.cancel();
                            });
    while (!lookup->done && !aborted_) {
        lookup->wake.expires_at(asio::steady_timer::time_point::max());
        co_await lookup->wake.async_wait(use_tuple);
    }
    lookup_.reset();
    if (aborted_) co_return asio::error::operation_aborted;
    if (lookup->ec) {
        why = "resolving " + address_.host + ": " + lookup->ec.message();
        co_return lookup->ec;
    }
    for (const auto& r : lookup->endpoints)
        out.push_back(r.endpoint());
    co_return error_code{};
}

asio::awaitable<error_code> transport::start_tls(std::string& why) {
    if (!tls_context_) {
        std::string bad;
        tls_context_ = make_tls_context(tls_config_, bad);
        if (!tls_context_) {
            why = "TLS for " + node() + ": " + bad;
            refused_for_good_ = true;  // the files named in the config
            co_return error::tls_failed;
        }
    }
    const std::string name = tls_peer_name(tls_config_, address_);
    tls_ = std::make_unique<asio::ssl::stream<socket_type&>>(socket_, *tls_context_);
    error_code ec;
    // SNI carries a host name, never an IP address (RFC 6066).
    if (asio::ip::make_address(name, ec); ec) SSL_set_tlsext_host_name(tls_->native_handle(), name.c_str());
    if (tls_config_.verify) tls_->set_verify_callback(asio::ssl::host_name_verification(name), ec);
    tls_handshaking_ = true;  // until the handshake is done: the connection tells a timeout here apart
    auto [hec] = co_await tls_->async_handshake(asio::ssl::stream_base::client, use_tuple);
    if (hec) {
        const auto verified = SSL_get_verify_result(tls_->native_handle());
        why = "TLS handshake with " + node() + ": " +
              tls_handshake_failure(hec, verified, tls_config_.verify, name);
        // The certificate it presented will not verify next time either.
        refused_for_good_ = tls_config_.verify && verified != X509_V_OK;
        tls_.reset();
        co_return error::tls_failed;
    }
    tls_handshaking_ = false;
    co_return error_code{};
}

std::size_t transport::write_now(std::string_view bytes, error_code& ec) {
    if (tls_) return 0;
    std::size_t n = socket_.write_some(asio::buffer(bytes), ec);
    if (ec == asio::error::would_block || ec == asio::error::try_again) {
        ec = {};
        n = 0;
    }
    return n;
}

// Not coroutines: they return the stream's own awaitable, so a read or a write costs no frame
// of ours on top of Asio's.
asio::awaitable<transport::io_result> transport::read_some(asio::mutable_buffer buffer) {
    if (tls_) return tls_->async_read_some(buffer, use_tuple);
    return socket_.async_read_some(buffer, use_tuple);
}

asio::awaitable<transport::io_result> transport::write_all(asio::const_buffer bytes) {
    if (tls_) return asio::async_write(*tls_, bytes, use_tuple);
    return asio::async_write(socket_, bytes, use_tuple);
}

}  // namespace redlock::redis::detail
