// SPDX-License-Identifier: BSL-1.0
// A critical section longer than the lease: async_with_lock keeps the 2 s lease alive through a
// 5 s body with its watchdog, then releases it. Prints the lease's remaining validity each second
// (it never runs out) and the client's renewal count at the end.
//
//   scoped_lock [URI[,URI...] | config.json]        default redis://127.0.0.1:6379
#include "example_support.hpp"
#include <redlock/redlock.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <cstdio>

namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {

asio::awaitable<int> critical_section(redlock::lease& lease) {
    asio::steady_timer timer(co_await asio::this_coro::executor);
    for (int second = 1; second <= 5; ++second) {
        timer.expires_after(1s);
        co_await timer.async_wait(asio::use_awaitable);
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(lease.remaining());
        std::printf("  %d s into the body: lease valid for %lld ms more\n", second,
                    static_cast<long long>(left.count()));
    }
    co_return 5;
}

asio::awaitable<int> hold(redlock::client& client) {
    redlock::lock_options o;
    o.ttl = 2s;
    o.wait = 5s;
    int seconds =
        co_await redlock::async_with_lock(client, "example:scoped", o, critical_section, asio::use_awaitable);
    std::printf("held example:scoped for %d s on a 2 s lease; %llu renewals\n", seconds,
                static_cast<unsigned long long>(client.metrics().watchdog_renewals));
    // A clean shutdown: whatever is still pending ends, what the client holds is released, and
    // the connections close once the servers have answered everything sent on them.
    co_await client.async_close(asio::use_awaitable);
    std::printf("client closed\n");
    co_return 0;
}

}  // namespace

int main(int argc, char** argv) {
    const auto cfg = example_config("scoped_lock", argc > 1 ? argv[1] : nullptr);
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), cfg);
    return run_example(ioc, "scoped_lock", hold(client));
}
