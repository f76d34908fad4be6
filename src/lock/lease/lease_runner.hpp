// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_LOCK_LEASE_LEASE_RUNNER_HPP
#define REDLOCK_LOCK_LEASE_LEASE_RUNNER_HPP

#include "lock/lease/lease_state.hpp"

#include <chrono>
#include <memory>
#include <optional>

namespace redlock::detail {

/// The executor of a lease's machine (lease_fsm.hpp): feeds it `in` and carries out the steps it
/// returns (rounds, timers, counts, the end), then any input that came meanwhile, in order. It
/// decides nothing. On the client's strand.
void resume_lease(const std::shared_ptr<lease_state>& state, lease_input in);

/// Moves the lease out of held by `event` (dropped, client_closed), from any thread; the lease
/// then ends on the strand. Returns whether this call moved it. Never throws (destructors call
/// it): if the end cannot even be queued, its keys expire with their ttl.
bool leave_lease(const std::shared_ptr<lease_state>& state, lease_event event) noexcept;

}  // namespace redlock::detail

#endif
