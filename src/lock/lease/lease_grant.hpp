// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_LOCK_LEASE_LEASE_GRANT_HPP
#define REDLOCK_LOCK_LEASE_LEASE_GRANT_HPP

#include "lock/lease/lease_state.hpp"
#include "lock/lease/won_lock.hpp"
#include <redlock/lock_options.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace redlock::detail {

/// The state of a new lease: registered as the owner's hold for its re-entries (fenced
/// reentrant), with its watchdog started (lock_options::watchdog), extended at once when asked.
/// On the client's strand.
[[nodiscard]] std::shared_ptr<lease_state> grant_lease(const std::shared_ptr<client_state>& client,
                                                       won_lock won, const lock_options& options,
                                                       std::chrono::steady_clock::time_point now);

}  // namespace redlock::detail

#endif
