// SPDX-License-Identifier: BSL-1.0
// A seat-booking service: a TCP server whose connections contend for the same seats, run as
// several processes behind one port range. Each request "BOOK <seat> <customer>\n" checks the
// seat in the store, takes a moment to "charge the customer", and records the booking; the check
// and the write happen under the seat's lock (async_with_lock), so two processes never both see
// a seat free. Replies: "OK\n", "TAKEN <customer>\n", "ERR <why>\n". With --no-lock the same
// service double-books (for comparison).
//
//   seat_booking NODES|config.json [--port 0] [--think-ms 5] [--no-lock]
//   prints "listening on 127.0.0.1:PORT", serves until SIGTERM or SIGINT
#include "example_support.hpp"
#include <redlock/redlock.hpp>
#include <redlock/resp/request.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>

namespace asio = boost::asio;
using asio::ip::tcp;
using namespace std::chrono_literals;

namespace {

struct service {
    redlock::client& locks;
    redlock::redis::connection& store;
    std::chrono::milliseconds think{5};
    bool use_lock = true;
};

// Checks and books one seat; runs under the seat's lock unless --no-lock.
asio::awaitable<std::string> book(service& svc, std::string seat, std::string customer) {
    const std::string key = "example:seat:" + seat;
    redlock::resp::request get;
    get.push("GET", key);
    auto owner = co_await svc.store.async_exec(get, 1s, asio::use_awaitable);
    if (!owner.at(0).is_null()) co_return "TAKEN " + owner[0].str + "\n";
    asio::steady_timer charging(co_await asio::this_coro::executor, svc.think);
    co_await charging.async_wait(asio::use_awaitable);
    redlock::resp::request set;
    set.push("SET", key, customer);
    co_await svc.store.async_exec(set, 1s, asio::use_awaitable);
    co_return "OK\n";
}

asio::awaitable<std::string> handle(service& svc, const std::string& line) {
    std::istringstream words(line);
    std::string verb, seat, customer;
    words >> verb >> seat >> customer;
    if (verb != "BOOK" || seat.empty() || customer.empty()) co_return "ERR expected BOOK <seat> <customer>\n";
    if (!svc.use_lock) co_return co_await book(svc, seat, customer);
    redlock::lock_options o;
    o.ttl = 2s;
    o.wait = 5s;
    auto body = [&svc, seat, customer](redlock::lease&) { return book(svc, seat, customer); };
    try {
        co_return co_await redlock::async_with_lock(svc.locks, "seat:" + seat, o, body, asio::use_awaitable);
    } catch (const boost::system::system_error& e) {
        co_return "ERR " + std::string(e.what()) + "\n";
    }
}

asio::awaitable<void> serve(service& svc, tcp::socket socket) {
    std::string buffer;
    for (;;) {
        auto [ec, n] = co_await asio::async_read_until(socket, asio::dynamic_buffer(buffer), '\n',
                                                       asio::as_tuple(asio::use_awaitable));
        if (ec) co_return;  // the customer hung up
        const std::string line = buffer.substr(0, n - 1);
        buffer.erase(0, n);
        const std::string reply = co_await handle(svc, line);
        auto [wec, written] =
            co_await asio::async_write(socket, asio::buffer(reply), asio::as_tuple(asio::use_awaitable));
        if (wec) co_return;
    }
}

asio::awaitable<void> accept_loop(service& svc, tcp::acceptor& acceptor) {
    for (;;) {
        auto [ec, socket] = co_await acceptor.async_accept(asio::as_tuple(asio::use_awaitable));
        if (ec) co_return;  // closed: shutting down
        asio::co_spawn(acceptor.get_executor(), serve(svc, std::move(socket)), asio::detached);
    }
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: seat_booking NODES|config.json [--port 0] [--think-ms 5] [--no-lock]\n");
        return 2;
    }
    const auto cfg = example_config("seat_booking", argv[1]);
    unsigned short port = 0;
    std::chrono::milliseconds think{5};
    bool use_lock = true;
    for (int i = 2; i < argc; ++i) {
        const std::string flag = argv[i];
        if (flag == "--no-lock") {
            use_lock = false;
        } else if (flag == "--port" && i + 1 < argc) {
            port = static_cast<unsigned short>(std::atoi(argv[++i]));
        } else if (flag == "--think-ms" && i + 1 < argc) {
            think = std::chrono::milliseconds(std::atoi(argv[++i]));
        } else {
            std::fprintf(stderr, "seat_booking: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    asio::io_context ioc;
    redlock::client locks(ioc.get_executor(), cfg);
    auto store = open_store(ioc, cfg);
    service svc{locks, *store, think, use_lock};
    tcp::acceptor acceptor(ioc, tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
    std::printf("listening on 127.0.0.1:%u\n", static_cast<unsigned>(acceptor.local_endpoint().port()));
    std::fflush(stdout);
    asio::signal_set stop(ioc, SIGTERM, SIGINT);
    stop.async_wait([&](boost::system::error_code, int) { ioc.stop(); });
    asio::co_spawn(ioc, accept_loop(svc, acceptor), asio::detached);
    ioc.run();
    return 0;
}
