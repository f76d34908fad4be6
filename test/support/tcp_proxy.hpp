// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_TEST_SUPPORT_TCP_PROXY_HPP
#define REDLOCK_TEST_SUPPORT_TCP_PROXY_HPP

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace redlock::test {

namespace detail {
struct tcp_proxy_state;
}

/// A TCP proxy that injects network faults between a client and one upstream server
/// (a `redis_server` of the fixture): latency per direction, replies that never arrive, a link
/// that swallows everything, and connection resets.
///
/// It listens on 127.0.0.1 (or another loopback address) on a free port and forwards every
/// accepted connection to `upstream_port` on the same address over a connection of its own. It
/// runs its own io_context on its own thread, so it keeps working while the test's io_context is blocked or
/// busy (a blocking client, a test that runs its io_context only inside run_coro).
///
/// Faults apply to every connection, current and future, from the moment each chunk of bytes is
/// read by the proxy: a setter affects the chunks read after it returns, never those already
/// read. Bytes are never reordered within a direction.
///
/// A TCP stream never loses bytes in the middle and goes on, and neither does the proxy: a
/// connection from which a mode discarded bytes is reset when the mode goes back to pass
/// (set_mode(pass), heal()). Until then it stalls, as a real partition does. Had it gone on, a
/// pipelining client would match the replies after the hole to the wrong requests.
///
/// When one side closes its connection (EOF), what is still queued for the other side is
/// written, then both connections are closed. A read or write error closes both at once, and a
/// client whose upstream connection cannot be made is closed.
///
/// All members may be called from any thread. The proxy buffers whatever it reads without limit
/// (it is meant for tests, not bulk transfers).
class tcp_proxy {
public:
    enum class mode {
        pass,          ///< forward both ways
        drop_replies,  ///< forward client->server; read and discard server->client (commands run, no replies)
        blackhole,     ///< read and discard both ways (nothing reaches the server, nothing comes back)
        drop_requests,  ///< read and discard client->server; forward server->client (a one-way partition)
    };

    /// Binds 127.0.0.1:0 and starts the proxy thread. Throws boost::system::system_error if it
    /// cannot listen. The upstream is connected to only when a client connects.
    explicit tcp_proxy(std::uint16_t upstream_port);
    /// The same on `host`:0, forwarding to `host`:`upstream_port` (both loopback addresses,
    /// such as a redis_server's host()). Throws std::invalid_argument for an address that is
    /// not IPv4.
    tcp_proxy(const std::string& host, std::uint16_t upstream_port);
    /// Closes the listener and every connection, and joins the thread. Never throws.
    ~tcp_proxy();

    tcp_proxy(const tcp_proxy&) = delete;
    tcp_proxy& operator=(const tcp_proxy&) = delete;

    /// Where the connections accepted from now on go: for a server that must be told the
    /// proxy's port before its own is known (a cluster node announces the port of its bus).
    void set_upstream_port(std::uint16_t upstream_port);

    /// The port the proxy listens on.
    [[nodiscard]] std::uint16_t port() const noexcept { return port_; }
    /// "redis://<host>:<port>"
    [[nodiscard]] std::string uri() const;

    /// Delay for every chunk going server->client (replies): a chunk read at time t is written
    /// no earlier than t + d, and after every chunk read before it. Zero (the default, and what a
    /// negative delay means): none.
    void set_reply_delay(std::chrono::milliseconds d);
    /// The same for client->server (requests).
    void set_request_delay(std::chrono::milliseconds d);
    /// A request delay of their own for the connections accepted from now on (the larger of it
    /// and set_request_delay's applies): one connection of a client slower than the others.
    void set_request_delay_of_new_connections(std::chrono::milliseconds d);
    /// Back to `pass` resets every connection that lost bytes (see above); returns once it did.
    void set_mode(mode m);
    /// A random extra delay in [0, j] for every chunk, both directions (order is still kept: a
    /// chunk is never written before the one read ahead of it).
    void set_jitter(std::chrono::milliseconds j);
    /// Writes what it forwards one byte at a time (a peer that reads replies in pieces).
    void set_slice(bool one_byte_writes);
    /// Forwards only `bytes` more bytes server->client (or client->server), then resets the
    /// connection that reached the limit: a reply (request) cut in the middle. One-shot: the
    /// limit is gone after it fired. A negative count: no limit.
    void cut_replies_after(std::int64_t bytes);
    void cut_requests_after(std::int64_t bytes);
    /// Back to forwarding everything at once: pass, no delay, no jitter, no slicing, no cut,
    /// what was held delivered (connections with a delay of their own keep it).
    void heal();

    /// From now on, holds back what the clients of the connections open now send: nothing of it
    /// reaches the server until deliver_held(); connections accepted later are not affected. A
    /// held connection stays open to the server after its client closed it (a client that gave
    /// the silent connection up), and its replies then go nowhere: the bytes a client wrote
    /// before it abandoned a connection, still on their way.
    void hold_requests();
    /// Forwards everything held back, in order, at once, and holds nothing more. A held
    /// connection whose client is gone closes once the server has read all of it and closed.
    void deliver_held();
    /// Held connections whose client is gone, still open to the server: before
    /// deliver_held(), the ones a client abandoned with bytes on their way; after it, 0 once
    /// the server has run all they held.
    [[nodiscard]] std::size_t abandoned_connections() const;

    /// From now on, forwards nothing from or to the clients that connect from one of `hosts`
    /// (their IPv4 addresses), on their connections open now and those they open later: a
    /// partition between them and the server, which other clients still reach. Replaces the
    /// previous list; a connection that lost bytes to it is reset once its client is no
    /// longer listed (an empty list heals them all), as set_mode(pass) does.
    void cut_clients_from(const std::vector<std::string>& hosts);

    /// Abruptly closes every current client and upstream connection (RST: SO_LINGER 0), dropping
    /// whatever is queued. Returns once they are closed. The proxy goes on accepting.
    void reset_connections();

    /// Connections accepted so far.
    [[nodiscard]] std::size_t accepted() const;
    /// Bytes read from clients / from the upstream server so far, over all connections, whether
    /// they were then forwarded or discarded. Lets a test wait until the proxy has seen a request
    /// (or a reply) before it asserts what became of it.
    [[nodiscard]] std::uint64_t bytes_from_clients() const;
    [[nodiscard]] std::uint64_t bytes_from_server() const;

private:
    std::unique_ptr<detail::tcp_proxy_state> state_;
    std::string host_;
    std::uint16_t port_ = 0;
    std::thread thread_;
};

}  // namespace redlock::test

#endif
