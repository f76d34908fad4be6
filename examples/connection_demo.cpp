// SPDX-License-Identifier: BSL-1.0
// Thousands of coroutines share one pipelined connection. Each one increments its own counter
// and checks that every reply is the next number in its sequence, so a reply handed to the
// wrong coroutine would show at once. Prints the throughput and how many requests each socket
// write carried on average (auto-pipelining at work).
//
//   connection_demo [--uri redis://127.0.0.1:6379] [--coroutines 2000] [--seconds 3]
#include <redlock/error.hpp>
#include <redlock/redis/connection.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <random>
#include <string>

namespace asio = boost::asio;
using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

namespace {

struct totals {
    std::uint64_t requests = 0;
    std::uint64_t out_of_order = 0;
    std::uint64_t errors = 0;
};

asio::awaitable<void> count_up(redlock::redis::connection& conn, std::string key,
                               clock_type::time_point until, totals& t) {
    std::int64_t expected = 0;
    redlock::resp::request incr;
    incr.push("INCR", key);
    while (clock_type::now() < until) {
        auto replies = co_await conn.async_exec(incr, asio::use_awaitable);
        if (replies.size() != 1 || replies[0].kind != redlock::resp::type::integer) {
            ++t.errors;
            continue;
        }
        if (replies[0].integer != ++expected) ++t.out_of_order;
        ++t.requests;
    }
}

asio::awaitable<int> demo(redlock::redis::connection& conn, int coroutines, int seconds) {
    auto ex = co_await asio::this_coro::executor;
    auto [ec] = co_await conn.async_connect(asio::as_tuple(asio::use_awaitable));
    if (ec) {
        std::cerr << "connect failed: " << conn.last_error().message << "\n";
        co_return 1;
    }
    std::cout << "connected to " << conn.config().address.to_string() << " (RESP" << conn.protocol() << ")\n";

    // A fresh key space per run, so reruns against the same server start from zero.
    std::string prefix = "redlock-demo:" + std::to_string(std::random_device{}()) + ":";
    totals t;
    auto start = clock_type::now();
    auto until = start + std::chrono::seconds(seconds);
    int finished = 0;
    for (int i = 0; i < coroutines; ++i) {
        auto worker = count_up(conn, prefix + std::to_string(i), until, t);
        asio::co_spawn(ex, std::move(worker), [&finished](std::exception_ptr ep) {
            ++finished;
            if (ep) std::rethrow_exception(ep);
        });
    }
    asio::steady_timer poll(ex);
    while (finished < coroutines) {
        poll.expires_after(10ms);
        co_await poll.async_wait(asio::use_awaitable);
    }
    double elapsed = std::chrono::duration<double>(clock_type::now() - start).count();

    // Clean up in one request of many commands.
    redlock::resp::request cleanup;
    for (int i = 0; i < coroutines; ++i)
        cleanup.push("DEL", prefix + std::to_string(i));
    auto deleted = co_await conn.async_exec(cleanup, asio::use_awaitable);

    auto stats = conn.stats();
    std::printf("%d coroutines on one connection for %.2f s\n", coroutines, elapsed);
    std::printf("  requests      %llu (%.0f/s)\n", static_cast<unsigned long long>(t.requests),
                static_cast<double>(t.requests) / elapsed);
    std::printf("  socket writes %llu (%.1f requests per write)\n",
                static_cast<unsigned long long>(stats.writes),
                stats.writes ? static_cast<double>(t.requests) / static_cast<double>(stats.writes) : 0.0);
    std::printf("  out of order  %llu, errors %llu, keys cleaned up %zu\n",
                static_cast<unsigned long long>(t.out_of_order), static_cast<unsigned long long>(t.errors),
                deleted.size());
    co_return (t.out_of_order == 0 && t.errors == 0 && t.requests > 0) ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    std::string uri = "redis://127.0.0.1:6379";
    int coroutines = 2000;
    int seconds = 3;
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        if ((arg == "--uri" || arg == "--coroutines" || arg == "--seconds") && i + 1 < argc) {
            std::string v = argv[++i];
            if (arg == "--uri") uri = v;
            if (arg == "--coroutines") coroutines = std::atoi(v.c_str());
            if (arg == "--seconds") seconds = std::atoi(v.c_str());
        } else {
            std::cerr << "usage: connection_demo [--uri URI] [--coroutines N] [--seconds S]\n";
            return 2;
        }
    }
    if (coroutines <= 0 || seconds <= 0) {
        std::cerr << "connection_demo: --coroutines and --seconds must be positive\n";
        return 2;
    }
    redlock::redis::connection_config cfg;
    std::string why;
    if (redlock::redis::parse_node_uri(uri, cfg.address, why)) {
        std::cerr << "connection_demo: " << why << "\n";
        return 2;
    }

    asio::io_context ioc(1);
    redlock::redis::connection conn(ioc.get_executor(), cfg);
    int status = 1;
    auto main_coro = demo(conn, coroutines, seconds);
    asio::co_spawn(ioc, std::move(main_coro), [&](std::exception_ptr ep, int rc) {
        status = rc;
        conn.close();
        if (ep) std::rethrow_exception(ep);
    });
    ioc.run();
    return status;
}
