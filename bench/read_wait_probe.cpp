// SPDX-License-Identifier: BSL-1.0
// Whether waiting for readability before a read saves a system call under this Asio's epoll
// reactor. One echo over a loopback TCP pair, K round trips, each side reading either
//   - "read": async_read_some at once, which tries the read before epoll said anything (Asio's
//     speculative read; after a short read it finds nothing, EAGAIN), or
//   - "wait": async_wait(wait_read), then read_some on the non-blocking socket.
// Run it under `strace -c -f` for the calls and under `/usr/bin/time` for the CPU: the empty
// recvfrom of "read" becomes an epoll_ctl(EPOLL_CTL_MOD) in "wait", because the reactor re-arms
// an edge-triggered descriptor for each wait it queues without a speculative try.
//
//   read_wait_probe read|wait [--round-trips K]

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using boost::system::error_code;

// One end of the pair: reads what comes, then hands it to `on_read`.
struct end_point {
    tcp::socket socket;
    std::array<char, 64> buffer{};
    bool wait_first = false;

    template <class Handler>
    void read(Handler on_read) {
        if (!wait_first) {
            socket.async_read_some(asio::buffer(buffer), on_read);
            return;
        }
        socket.async_wait(tcp::socket::wait_read, [this, on_read](error_code ec) {
            if (ec) return on_read(ec, std::size_t{0});
            error_code read_ec;
            const auto n = socket.read_some(asio::buffer(buffer), read_ec);
            on_read(read_ec, n);
        });
    }
};

struct echo_pair {
    end_point client, server;
    long round_trips_left;

    void serve() {
        server.read([this](error_code ec, std::size_t n) {
            if (ec) return;
            asio::write(server.socket, asio::buffer(server.buffer.data(), n));
            serve();
        });
    }
    void ask() {
        client.read([this](error_code ec, std::size_t) {
            if (ec) return;
            if (--round_trips_left == 0) {
                client.socket.close();
                server.socket.close();
                return;
            }
            asio::write(client.socket, asio::buffer("x", 1));
            ask();
        });
    }
};

[[noreturn]] void usage() {
    std::fprintf(stderr, "usage: read_wait_probe read|wait [--round-trips K]\n");
    std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) usage();
    const std::string_view mode = argv[1];
    if (mode != "read" && mode != "wait") usage();
    long round_trips = 200000;
    if (argc == 4 && std::string_view(argv[2]) == "--round-trips") {
        round_trips = std::strtol(argv[3], nullptr, 10);
        if (round_trips <= 0) usage();
    } else if (argc != 2) {
        usage();
    }

    asio::io_context ioc(1);
    tcp::acceptor acceptor(ioc, {asio::ip::make_address("127.0.0.1"), 0});
    echo_pair pair{{tcp::socket(ioc)}, {tcp::socket(ioc)}, round_trips};
    pair.client.socket.connect(acceptor.local_endpoint());
    acceptor.accept(pair.server.socket);
    for (auto* e : {&pair.client, &pair.server}) {
        e->socket.set_option(tcp::no_delay(true));
        e->socket.non_blocking(true);
        e->wait_first = mode == "wait";
    }
    pair.serve();
    pair.ask();
    asio::write(pair.client.socket, asio::buffer("x", 1));
    ioc.run();
    std::printf("{\"mode\": \"%s\", \"round_trips\": %ld}\n", argv[1], round_trips - pair.round_trips_left);
    return pair.round_trips_left == 0 ? 0 : 1;
}
