// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_LOCK_NODES_UPTIME_QUARANTINE_HPP
#define REDLOCK_LOCK_NODES_UPTIME_QUARANTINE_HPP

#include "lock/acquire/quorum.hpp"

#include <chrono>

namespace redlock::detail {

/// How long after its start a server does not vote under the restart quarantine's uptime rule
/// (node_health): INFO gives the uptime in whole seconds, so a second more, then max_ttl and
/// its drift allowance. `redlock check` says the same of a young server.
[[nodiscard]] inline std::chrono::steady_clock::duration uptime_quarantine(std::chrono::milliseconds max_ttl,
                                                                           double drift_factor) noexcept {
    return std::chrono::seconds(1) + max_ttl + drift_allowance(max_ttl, drift_factor);
}

}  // namespace redlock::detail

#endif
