// SPDX-License-Identifier: BSL-1.0
// Fenced writes to a protected store. A slow holder takes the lock (fence F1) and then stalls
// past its ttl (like a GC pause; no watchdog here to notice); a second holder gets the lock with
// a larger fence F2 and writes. When the slow one wakes up, its write still carries F1, and the
// store refuses it (error::stale_fence): the lock alone could not have stopped it.
//
//   fenced_store [URI,... | config.json]      the store is a key on the first node
#include "example_support.hpp"
#include <redlock/redlock.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <cstdio>

namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {

asio::awaitable<int> story(redlock::client& slow, redlock::client& fast, redlock::redis::connection& store) {
    redlock::lock_options o;
    o.ttl = 300ms;
    o.fenced = true;
    o.wait = 2s;
    auto first = co_await slow.async_acquire("example:account", o, asio::use_awaitable);
    std::printf("slow holder: fence %llu, then a pause of 600 ms\n",
                static_cast<unsigned long long>(first.fence()));

    // While the slow holder is paused its lease runs out, and the fast one gets the lock.
    auto second = co_await fast.async_acquire("example:account", o, asio::use_awaitable);
    std::printf("fast holder: fence %llu\n", static_cast<unsigned long long>(second.fence()));
    co_await redlock::async_fenced_set(store, "example:account:balance", "example:account:fence",
                                       second.fence(), "100 (fast)", 1s, asio::use_awaitable);
    std::printf("fast holder wrote with fence %llu\n", static_cast<unsigned long long>(second.fence()));
    co_await second.async_release(asio::use_awaitable);

    asio::steady_timer pause(co_await asio::this_coro::executor, 600ms);
    co_await pause.async_wait(asio::use_awaitable);
    auto [late] = co_await redlock::async_fenced_set(store, "example:account:balance",
                                                     "example:account:fence", first.fence(), "0 (slow)", 1s,
                                                     asio::as_tuple(asio::use_awaitable));
    std::printf("slow holder wakes up and writes with fence %llu: %s\n",
                static_cast<unsigned long long>(first.fence()), late ? late.message().c_str() : "accepted?!");
    co_return late == redlock::error::stale_fence ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    const auto cfg = example_config("fenced_store", argc > 1 ? argv[1] : nullptr);
    asio::io_context ioc;
    redlock::client slow(ioc.get_executor(), cfg);
    redlock::client fast(ioc.get_executor(), cfg);
    auto store = open_store(ioc, cfg);
    return run_example(ioc, "fenced_store", story(slow, fast, *store));
}
