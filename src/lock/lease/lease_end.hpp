// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_LOCK_LEASE_LEASE_END_HPP
#define REDLOCK_LOCK_LEASE_LEASE_END_HPP

#include "lock/lease/lease_ops.hpp"
#include "lock/lease/lease_state.hpp"

#include <boost/system/error_code.hpp>

#include <memory>

namespace redlock::detail {

/// Ends a lease, once: stops its watchdog and completes every async_wait_lost with `reason`
/// (error::lock_lost, or success when its holder released or dropped it). Strand only.
/// Tells client_config::on_event: the watchdog's stop if it ran, and the lease's end (released,
/// or lost, with `why`).
void end_lease(lease_state& state, boost::system::error_code reason, std::string_view why = {});

/// end_lease() from any thread, later on the strand; `why` must outlive it (a static text).
/// Never throws.
void post_end_lease(const std::shared_ptr<lease_state>& state, boost::system::error_code reason,
                    std::string_view why = {}) noexcept;

/// Gives the lease up by `event` (dropped, or one that loses it) if it is still held: queues the
/// token-checked release on every node (answered by nobody) and ends the lease. Returns whether
/// it was held. Never throws (destructors call it): if the release cannot even be queued, the
/// keys expire with their ttl.
bool give_up(const std::shared_ptr<lease_state>& state, lease_event event) noexcept;

/// Gives the lease up as lost (lock_lost) when valid_until() passes without an extension; an
/// extension in the meantime moves the watch to the new deadline. One watch per lease, shared by
/// its watchdog and its async_wait_lost waiters; starting it again only re-arms it, and
/// end_lease() stops it. Strand only.
void watch_validity(const std::shared_ptr<lease_state>& state);

}  // namespace redlock::detail

#endif
