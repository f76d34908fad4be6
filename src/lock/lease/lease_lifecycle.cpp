// SPDX-License-Identifier: BSL-1.0
#include "lock/lease/lease_lifecycle.hpp"

#include <redlock/error.hpp>

namespace redlock::detail {

const char* describe(lease_event event) noexcept {
    switch (event) {
        case lease_event::release_called:
            return "released by its holder";
        case lease_event::dropped:
            return "dropped while held: released in the background";
        case lease_event::extend_confirmed:
            return "extended";
        case lease_event::extend_denied:
            return "a majority of nodes no longer hold our token";
        case lease_event::extend_too_late:
            return "the extension's quorum came after the validity ran out";
        case lease_event::validity_passed:
            return "no extension was confirmed before the validity ran out";
        case lease_event::max_hold_reached:
            return "max_hold reached: the watchdog stopped extending it";
        case lease_event::client_closed:
            return "the client closed, keeping it until its ttl";
        case lease_event::adopted:
            return "handed over: another holder adopted it";
    }
    return "";
}

lease_actions on_lease_event(lease_phase phase, lease_event event) noexcept {
    lease_actions a;
    a.next = phase;
    if (phase != lease_phase::held) return a;
    switch (event) {
        case lease_event::release_called:
        case lease_event::dropped:
            a.next = lease_phase::released;
            a.send_release = true;
            a.end = true;
            return a;
        case lease_event::client_closed:
            // Kept on the servers until its ttl runs out; this client extends it no more.
            a.next = lease_phase::released;
            a.end = true;
            a.reason = error::client_closed;
            return a;
        case lease_event::adopted:
            // The adopter's token holds now: there is nothing of ours left to release.
            a.next = lease_phase::released;
            a.end = true;
            a.reason = error::handed_over;
            return a;
        case lease_event::extend_confirmed:
            a.move_valid_until = true;
            return a;
        case lease_event::extend_denied:
        case lease_event::extend_too_late:
        case lease_event::validity_passed:
        case lease_event::max_hold_reached:
            // Our keys may be gone from a majority, so somebody else may hold the resource now:
            // delete our token wherever it still is, so nobody waits for a lease given up.
            a.next = lease_phase::lost;
            a.send_release = true;
            a.end = true;
            a.reason = error::lock_lost;
            return a;
    }
    return a;
}

}  // namespace redlock::detail
