// SPDX-License-Identifier: BSL-1.0
#include "lock/client/suspension.hpp"

#include <time.h>

namespace redlock::detail {

std::chrono::nanoseconds suspended_so_far() noexcept {
#ifdef CLOCK_BOOTTIME
    timespec boot{};
    timespec monotonic{};
    if (clock_gettime(CLOCK_BOOTTIME, &boot) != 0 || clock_gettime(CLOCK_MONOTONIC, &monotonic) != 0)
        return {};
    const auto ns = [](const timespec& t) {
        return std::chrono::seconds(t.tv_sec) + std::chrono::nanoseconds(t.tv_nsec);
    };
    return ns(boot) - ns(monotonic);
#else
    return {};
#endif
}

}  // namespace redlock::detail
