// SPDX-License-Identifier: BSL-1.0
// A lock on one Redis instance, tried once (no waiting): Alice takes "example:report"; Bob's try
// fails at once with not_acquired; Alice releases; Bob's next try gets it.
//
//   try_lock [URI | config.json]        default redis://127.0.0.1:6379
#include "example_support.hpp"
#include <redlock/redlock.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <cstdio>

namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {

asio::awaitable<int> try_lock(redlock::client& alice, redlock::client& bob) {
    redlock::lock_options once;  // wait = 0: one attempt
    once.ttl = 10s;
    auto held = co_await alice.async_acquire("example:report", once, asio::use_awaitable);
    std::printf("alice holds example:report (token %s)\n", held.token().c_str());

    auto [busy, none] =
        co_await bob.async_acquire("example:report", once, asio::as_tuple(asio::use_awaitable));
    std::printf("bob tries: %s\n", busy ? busy.message().c_str() : "acquired?!");

    co_await held.async_release(asio::use_awaitable);
    std::printf("alice released it\n");
    auto mine = co_await bob.async_acquire("example:report", once, asio::use_awaitable);
    std::printf("bob tries again: holds it (token %s)\n", mine.token().c_str());
    co_await mine.async_release(asio::use_awaitable);
    co_return busy == redlock::error::not_acquired ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    const auto cfg = example_config("try_lock", argc > 1 ? argv[1] : nullptr);
    asio::io_context ioc;
    redlock::client alice(ioc.get_executor(), cfg);
    redlock::client bob(ioc.get_executor(), cfg);
    return run_example(ioc, "try_lock", try_lock(alice, bob));
}
