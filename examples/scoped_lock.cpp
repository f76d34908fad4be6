// A critical section longer than the lease: async_with_lock keeps the 2 s lease alive through a
// 5 s body with its watchdog, then releases it. Prints the lease's remaining validity each second
// (it never runs out) and the client's renewal count at the end.
//
//   scoped_lock [URI[,URI...]]        default redis://127.0.0.1:6379
#include <redlock/redlock.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <string>

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

}  // namespace

int main(int argc, char** argv) {
    redlock::client_config cfg;
    std::string nodes = argc > 1 ? argv[1] : "redis://127.0.0.1:6379";
    for (std::size_t start = 0; start <= nodes.size();) {
        auto comma = std::min(nodes.find(',', start), nodes.size());
        cfg.nodes.push_back(nodes.substr(start, comma - start));
        start = comma + 1;
    }
    std::string why;
    if (auto ec = cfg.validate(why)) {
        std::fprintf(stderr, "scoped_lock: %s\n", why.c_str());
        return 2;
    }
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), cfg);
    redlock::lock_options o;
    o.ttl = 2s;
    o.wait = 5s;
    int status = 1;
    asio::co_spawn(
        ioc,
        [&]() -> asio::awaitable<void> {
            int seconds = co_await redlock::async_with_lock(client, "example:scoped", o, critical_section,
                                                            asio::use_awaitable);
            std::printf("held example:scoped for %d s on a 2 s lease; %llu renewals\n", seconds,
                        static_cast<unsigned long long>(client.metrics().watchdog_renewals));
        },
        [&](std::exception_ptr ep) {
            try {
                if (ep) std::rethrow_exception(ep);
                status = 0;
            } catch (const std::exception& e) {
                std::fprintf(stderr, "scoped_lock: %s\n", e.what());
            }
            ioc.stop();  // the client's connections keep the io_context busy
        });
    ioc.run();
    return status;
}
