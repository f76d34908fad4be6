// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_TEST_SUPPORT_OVERLAPPING_PAIRS_HPP
#define REDLOCK_TEST_SUPPORT_OVERLAPPING_PAIRS_HPP

#include "support/lock_helpers.hpp"
#include "support/run_coro.hpp"
#include <redlock/redlock.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace redlock::test {

/// What take_overlapping_pairs() saw.
struct pairs_outcome {
    int held = 0;      ///< acquisitions that succeeded
    int failed = 0;    ///< acquisitions that failed (none should: they wait a minute)
    int overlaps = 0;  ///< times a resource was taken while counted as held
    bool finished = false;
};

/// Eight workers over two clients take overlapping pairs of the four `resources`, half of them
/// naming the pair in the opposite order, each `rounds` times, holding each pair 2 ms. The
/// holders are counted in this process, on its one thread, so an overlap is seen when it happens.
inline pairs_outcome take_overlapping_pairs(boost::asio::io_context& ioc, client& first, client& second,
                                            const std::vector<std::string>& resources, int rounds) {
    using namespace std::chrono_literals;
    pairs_outcome out;
    std::map<std::string, int> holders;
    int running = 8;
    for (std::size_t w = 0; w < 8; ++w) {
        boost::asio::co_spawn(
            ioc,
            [&, w]() -> boost::asio::awaitable<void> {
                auto& c = w % 2 == 0 ? first : second;
                std::vector<std::string> pair = {resources[w % 4], resources[(w + 1) % 4]};
                if (w >= 4) std::swap(pair[0], pair[1]);
                for (int i = 0; i < rounds; ++i) {
                    auto [ec, l] = co_await c.async_acquire_all(
                        pair, options(10s, 60s), boost::asio::as_tuple(boost::asio::use_awaitable));
                    if (ec) {
                        ++out.failed;
                        continue;
                    }
                    for (const auto& r : pair)
                        if (holders[r]++ > 0) ++out.overlaps;
                    ++out.held;
                    co_await sleep_for(2ms);
                    for (const auto& r : pair)
                        --holders[r];
                    co_await l.async_release(boost::asio::use_awaitable);
                }
                --running;
            },
            boost::asio::detached);
    }
    run_coro(
        ioc,
        [&]() -> boost::asio::awaitable<void> {
            out.finished = co_await eventually([&] { return running == 0; }, 120s);
        }(),
        125s);
    return out;
}

}  // namespace redlock::test

#endif
