// SPDX-License-Identifier: BSL-1.0
// A server that shows its locks to Prometheus: a few workers take turns on one lock, and an HTTP
// endpoint serves client.metrics() in Prometheus' text format at /metrics. The client's events
// go to stderr as log lines, all but the routine grants and releases. On SIGTERM or SIGINT it
// stops accepting, closes the client (waiting acquires end, held leases are released) and exits 0.
//
//   metrics_server NODES|config.json [--port 0] [--workers 3] [--hold-ms 20]
//   prints "serving http://127.0.0.1:PORT/metrics"
//
// A scrape config for it: `scrape_configs: [{job_name: locks, static_configs: [{targets:
// ["127.0.0.1:PORT"]}]}]`.
#include "example_support.hpp"
#include <redlock/redlock.hpp>

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
#include <string>

namespace asio = boost::asio;
using asio::ip::tcp;
using namespace std::chrono_literals;

namespace {

constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);

std::string http_response(std::string_view status, std::string_view content_type, const std::string& body) {
    return "HTTP/1.1 " + std::string(status) + "\r\nContent-Type: " + std::string(content_type) +
           "\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
}

// One request per connection: a scraper opens a connection per scrape anyway.
asio::awaitable<void> serve(redlock::client& locks, tcp::socket socket) {
    // A client that sends nothing does not keep the connection open past 5 s.
    asio::steady_timer deadline(socket.get_executor(), 5s);
    deadline.async_wait([&socket](boost::system::error_code ec) {
        if (!ec) socket.close();
    });
    std::string request;
    auto [ec, n] = co_await asio::async_read_until(socket, asio::dynamic_buffer(request, 8192), "\r\n\r\n",
                                                   tuple_awaitable);
    std::string reply;
    if (ec) {
        reply =
            http_response("400 Bad Request", "text/plain", "expected one HTTP request of at most 8 KiB\n");
    } else if (request.starts_with("GET /metrics ")) {
        reply = http_response("200 OK", "text/plain; version=0.0.4; charset=utf-8",
                              locks.metrics().to_prometheus());
    } else if (request.starts_with("GET ")) {
        reply = http_response("404 Not Found", "text/plain", "the metrics are at /metrics\n");
    } else {
        reply = http_response("405 Method Not Allowed", "text/plain", "GET only\n");
    }
    co_await asio::async_write(socket, asio::buffer(reply), tuple_awaitable);
    deadline.cancel();
}

asio::awaitable<void> accept_loop(redlock::client& locks, tcp::acceptor& acceptor) {
    for (;;) {
        auto [ec, socket] = co_await acceptor.async_accept(tuple_awaitable);
        if (ec) co_return;  // closed: shutting down
        asio::co_spawn(acceptor.get_executor(), serve(locks, std::move(socket)), asio::detached);
    }
}

// Takes the lock, holds it a moment, lets it go, and does something else as long; until the
// client closes. (Without the pause the worker that released would take the lock again before
// the others hear of the release: a lock that is not `fair` lets it barge.)
asio::awaitable<void> worker(redlock::client& locks, std::chrono::milliseconds hold) {
    redlock::lock_options o;
    o.ttl = 2s;
    o.wait = 5s;
    asio::steady_timer timer(co_await asio::this_coro::executor);
    for (;;) {
        auto [ec, lease] = co_await locks.async_acquire("example:metrics", o, tuple_awaitable);
        if (ec == redlock::error::client_closed || ec == asio::error::operation_aborted) co_return;
        if (!ec) {
            timer.expires_after(hold);
            co_await timer.async_wait(tuple_awaitable);
            co_await lease.async_release(tuple_awaitable);
        }
        // A timeout or no quorum is counted in the metrics: try again after the pause.
        timer.expires_after(hold);
        co_await timer.async_wait(tuple_awaitable);
    }
}

asio::awaitable<int> close_on_signal(asio::signal_set& signals, tcp::acceptor& acceptor,
                                     redlock::client& locks) {
    co_await signals.async_wait(asio::use_awaitable);
    acceptor.close();
    co_await locks.async_close(asio::use_awaitable);
    std::printf("closed: %llu grants\n", static_cast<unsigned long long>(locks.metrics().acquired));
    co_return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr,
                     "usage: metrics_server NODES|config.json [--port 0] [--workers 3] [--hold-ms 20]\n");
        return 2;
    }
    auto cfg = example_config("metrics_server", argv[1]);
    unsigned short port = 0;
    int workers = 3;
    std::chrono::milliseconds hold{20};
    for (int i = 2; i < argc; ++i) {
        const std::string flag = argv[i];
        if (flag == "--port" && i + 1 < argc) {
            port = static_cast<unsigned short>(std::atoi(argv[++i]));
        } else if (flag == "--workers" && i + 1 < argc) {
            workers = std::atoi(argv[++i]);
        } else if (flag == "--hold-ms" && i + 1 < argc) {
            hold = std::chrono::milliseconds(std::atoi(argv[++i]));
        } else {
            std::fprintf(stderr, "metrics_server: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    // The server's logger: a line per event, but not for every grant and release.
    cfg.on_event = [](const redlock::event& e) {
        if (e.kind == redlock::event_kind::acquired || e.kind == redlock::event_kind::released) return;
        std::fprintf(stderr, "redlock: %s\n", redlock::to_string(e).c_str());
    };
    asio::io_context ioc;
    redlock::client locks(ioc.get_executor(), cfg);
    tcp::acceptor acceptor(ioc, tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
    std::printf("serving http://127.0.0.1:%u/metrics\n",
                static_cast<unsigned>(acceptor.local_endpoint().port()));
    std::fflush(stdout);
    asio::co_spawn(ioc, accept_loop(locks, acceptor), asio::detached);
    for (int w = 0; w < workers; ++w)
        asio::co_spawn(ioc, worker(locks, hold), asio::detached);
    asio::signal_set signals(ioc, SIGTERM, SIGINT);
    return run_example(ioc, "metrics_server", close_on_signal(signals, acceptor, locks));
}
