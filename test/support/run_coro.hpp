// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_TEST_SUPPORT_RUN_CORO_HPP
#define REDLOCK_TEST_SUPPORT_RUN_CORO_HPP

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <chrono>
#include <exception>
#include <optional>
#include <stdexcept>

namespace redlock::test {

/// Runs `coro` on `ioc` until it finishes, rethrowing what it throws. A coroutine that has not
/// finished within `limit` fails the test instead of hanging it. Connections keep working in the
/// background, so the io_context is run one handler at a time, never until it runs dry.
template <class T>
T run_coro(boost::asio::io_context& ioc, boost::asio::awaitable<T> coro,
           std::chrono::milliseconds limit = std::chrono::seconds(30)) {
    bool done = false;
    std::exception_ptr error;
    std::optional<T> result;
    boost::asio::co_spawn(ioc, std::move(coro), [&](std::exception_ptr ep, T value) {
        done = true;
        error = ep;
        result.emplace(std::move(value));
    });
    ioc.restart();
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (!done && std::chrono::steady_clock::now() < deadline)
        ioc.run_one_for(std::chrono::milliseconds(50));
    if (!done) throw std::runtime_error("test coroutine did not finish in time");
    if (error) std::rethrow_exception(error);
    return std::move(*result);
}

inline void run_coro(boost::asio::io_context& ioc, boost::asio::awaitable<void> coro,
                     std::chrono::milliseconds limit = std::chrono::seconds(30)) {
    auto wrapped = [](boost::asio::awaitable<void> c) -> boost::asio::awaitable<bool> {
        co_await std::move(c);
        co_return true;
    };
    run_coro<bool>(ioc, wrapped(std::move(coro)), limit);
}

}  // namespace redlock::test

#endif
