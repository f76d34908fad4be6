// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_TEST_SUPPORT_WAIT_UNTIL_HPP
#define REDLOCK_TEST_SUPPORT_WAIT_UNTIL_HPP

#include <chrono>
#include <functional>
#include <thread>

namespace redlock::test {

/// Polls `condition` from a thread that runs no io_context (a server's state, a child's output)
/// until it holds or `limit` has passed; whether it held. eventually() is the same inside a
/// coroutine.
inline bool wait_until(const std::function<bool()>& condition,
                       std::chrono::milliseconds limit = std::chrono::seconds(10)) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!condition()) {
        if (std::chrono::steady_clock::now() >= deadline) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return true;
}

}  // namespace redlock::test

#endif
