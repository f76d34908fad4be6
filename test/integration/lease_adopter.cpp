// SPDX-License-Identifier: BSL-1.0
// The other process of the hand-over tests. By default it adopts a lease another process wrote
// out (lease::handover), extends it, and releases it:
//
//   lease_adopter --nodes URI[,URI...] --lease FILE
//
// Prints "adopted <resource> fence <F>", "extended", "released", one per line, and exits 0 when
// every step succeeded; otherwise prints the step's error and diagnostics and exits 1.
//
//   lease_adopter --nodes URI[,URI...] --hold RESOURCE --lease FILE
//
// The first process instead: acquires RESOURCE with a watchdog (ttl 3 s), writes the lease out
// to FILE (whole, by a rename), prints "holding", and keeps it until it is killed.
#include "support/comma_list.hpp"
#include <redlock/redlock.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {

asio::awaitable<int> adopt(redlock::client& client, std::string text) {
    constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);
    redlock::lock_options o;
    o.ttl = 5s;
    redlock::diagnostics diag;
    auto [ec, l] = co_await client.async_adopt(text, o, diag, tuple_awaitable);
    if (ec) {
        std::printf("adopt: %s: %s\n", ec.message().c_str(), diag.message.c_str());
        co_return 1;
    }
    std::printf("adopted %s fence %llu\n", l.resource().c_str(), static_cast<unsigned long long>(l.fence()));
    auto [extended] = co_await l.async_extend(5s, diag, tuple_awaitable);
    if (extended) {
        std::printf("extend: %s: %s\n", extended.message().c_str(), diag.message.c_str());
        co_return 1;
    }
    std::printf("extended\n");
    auto [released] = co_await l.async_release(diag, tuple_awaitable);
    if (released) {
        std::printf("release: %s: %s\n", released.message().c_str(), diag.message.c_str());
        co_return 1;
    }
    std::printf("released\n");
    // The release completed on a quorum; the other nodes' deletes are still on their way (or
    // wait for a connection's handshake): the process exits only once they are answered.
    auto [closed] = co_await client.async_close(tuple_awaitable);
    if (closed) {
        std::printf("close: %s\n", closed.message().c_str());
        co_return 1;
    }
    co_return 0;
}

asio::awaitable<int> hold(redlock::client& client, std::string resource, std::string file) {
    constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);
    redlock::lock_options o;
    o.ttl = 3s;
    o.watchdog = true;
    redlock::diagnostics diag;
    auto [ec, l] = co_await client.async_acquire(resource, o, diag, tuple_awaitable);
    if (ec) {
        std::printf("acquire: %s: %s\n", ec.message().c_str(), diag.message.c_str());
        co_return 1;
    }
    std::ofstream(file + ".part") << l.handover();
    std::rename((file + ".part").c_str(), file.c_str());
    std::printf("holding\n");
    std::fflush(stdout);
    auto [ended] = co_await l.async_wait_lost(tuple_awaitable);
    std::printf("ended: %s\n", ended.message().c_str());
    co_return 0;
}

}  // namespace

int main(int argc, char** argv) {
    const bool holds = argc == 7 && std::string(argv[3]) == "--hold" && std::string(argv[5]) == "--lease";
    if (!holds && (argc != 5 || std::string(argv[1]) != "--nodes" || std::string(argv[3]) != "--lease")) {
        std::fprintf(stderr, "usage: lease_adopter --nodes URI[,URI...] [--hold RESOURCE] --lease FILE\n");
        return 2;
    }
    redlock::client_config cfg;
    cfg.nodes = redlock::test::split_node_uris(argv[2]);
    cfg.restart_quarantine = false;  // the test's servers are fresh
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), cfg);
    int status = 1;
    const auto done = [&](std::exception_ptr ep, int result) {
        status = ep ? 1 : result;
        ioc.stop();
    };
    if (holds) {
        asio::co_spawn(ioc, hold(client, argv[4], argv[6]), done);
    } else {
        std::ifstream in(argv[4]);
        std::stringstream text;
        text << in.rdbuf();
        asio::co_spawn(ioc, adopt(client, text.str()), done);
    }
    ioc.run();
    std::fflush(stdout);
    return status;
}
