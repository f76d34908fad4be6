// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_LOCK_LEASE_LEASE_LIFECYCLE_HPP
#define REDLOCK_LOCK_LEASE_LEASE_LIFECYCLE_HPP

#include <boost/system/error_code.hpp>

#include <cstdint>

namespace redlock::detail {

/// Where a lease is in its life. It starts held and leaves that phase once, for good: whoever
/// moves it out owns what the move asks for (sending the release, ending the lease).
enum class lease_phase : std::uint8_t {
    held,      ///< ours until valid_until, extended by its holder or its watchdog
    released,  ///< its holder released it, dropped it (the lease object went away), or handed it over
    lost,      ///< no quorum kept it: the validity ran out, a majority lost our token, max_hold
};

/// What can happen to a lease.
enum class lease_event : std::uint8_t {
    release_called,    ///< lease::async_release
    dropped,           ///< the lease object went away (destructor, move-assignment)
    extend_confirmed,  ///< a quorum extended it before its validity ran out
    extend_denied,     ///< a majority of nodes no longer hold our token
    extend_too_late,   ///< an extend's quorum came after the validity ran out (or it had already)
    validity_passed,   ///< valid_until passed with no extension confirmed
    max_hold_reached,  ///< lock_options::max_hold: the watchdog stops keeping it
    client_closed,     ///< client::async_close keeping leases: no longer extended, left to its ttl
    adopted,           ///< a lease that wrote a handover found its token gone: adopted elsewhere
};

/// What an event asks of the code around the lease.
struct lease_actions {
    lease_phase next = lease_phase::held;
    bool send_release = false;      ///< the token-checked release, on every node
    bool end = false;               ///< stop the watchdog and the validity watch, tell the waiters
    bool move_valid_until = false;  ///< the extend's new validity applies
    boost::system::error_code
        reason;  ///< what async_wait_lost waiters hear: lock_lost, handed_over, or success
};

/// Why a lease ended by `event`, for a person (event::detail).
[[nodiscard]] const char* describe(lease_event event) noexcept;

/// What `event` does to a lease in `phase`. A lease that is no longer held does nothing more:
/// a late extend does not revive it, a late deadline does not lose it twice.
[[nodiscard]] lease_actions on_lease_event(lease_phase phase, lease_event event) noexcept;

}  // namespace redlock::detail

#endif
