// SPDX-License-Identifier: BSL-1.0
// The same lock from code that is not a coroutine: a completion callback, and std::future from
// a thread that is not the event loop's (use_future). The io_context runs on its own thread.
//
//   callbacks_and_futures [URI,... | config.json]
#include "example_support.hpp"
#include <redlock/redlock.hpp>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <chrono>
#include <cstdio>
#include <future>
#include <thread>

namespace asio = boost::asio;
using namespace std::chrono_literals;

int main(int argc, char** argv) {
    const auto cfg = example_config("callbacks_and_futures", argc > 1 ? argv[1] : nullptr);
    asio::io_context ioc;
    auto work = asio::make_work_guard(ioc);
    std::thread loop([&] { ioc.run(); });
    int status = 0;
    {
        redlock::client client(ioc.get_executor(), cfg);
        redlock::lock_options o;
        o.ttl = 5s;
        o.wait = 2s;

        // A callback: it runs on the io_context's thread.
        std::promise<void> called_back;
        redlock::lease from_callback;
        client.async_acquire("example:callbacks", o, [&](boost::system::error_code ec, redlock::lease l) {
            std::printf("callback: %s\n", ec ? ec.message().c_str() : "holds example:callbacks");
            if (ec) status = 1;
            from_callback = std::move(l);
            from_callback.async_release([&](boost::system::error_code release_ec) {
                std::printf("callback: released (%s)\n", release_ec ? release_ec.message().c_str() : "ok");
                called_back.set_value();
            });
        });
        called_back.get_future().wait();

        // std::future: blocks this thread, never the event loop. Errors arrive as exceptions.
        try {
            auto lease = client.async_acquire("example:callbacks", o, asio::use_future).get();
            std::printf(
                "future: holds example:callbacks, %lld ms left\n",
                static_cast<long long>(
                    std::chrono::duration_cast<std::chrono::milliseconds>(lease.remaining()).count()));
            lease.async_release(asio::use_future).get();
            std::printf("future: released\n");
        } catch (const boost::system::system_error& e) {
            std::printf("future: %s\n", e.what());
            status = 1;
        }
    }
    work.reset();
    ioc.stop();
    loop.join();
    return status;
}
