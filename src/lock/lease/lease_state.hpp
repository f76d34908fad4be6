// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_LOCK_LEASE_LEASE_STATE_HPP
#define REDLOCK_LOCK_LEASE_LEASE_STATE_HPP

#include "lock/client/client_state.hpp"
#include "lock/client/suspension.hpp"
#include "lock/kinds/lock_kind.hpp"
#include "lock/lease/lease_fsm.hpp"

#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace redlock::detail {

class extend_round;
class lost_waiter;
class release_round;

/// What a lease knows about itself: its decisions in `fsm`, the rest of what its executor
/// (lease_runner.hpp) needs. Shared by the lease and its pending extend or release, so either may
/// finish after the other is gone. The fsm's observers are read on any thread; everything else is
/// the client's strand's.
struct lease_state {
    using clock = std::chrono::steady_clock;

    explicit lease_state(double drift_factor = 0.01) noexcept : fsm(drift_factor) {}
    ~lease_state() {
        // A lease torn down unended (its loop destroyed with its end still queued) still stops
        // counting as a running watchdog.
        if (client && fsm.watchdog_running())
            client->metrics().watchdogs_running.fetch_sub(1, std::memory_order_relaxed);
    }
    lease_state(const lease_state&) = delete;
    lease_state& operator=(const lease_state&) = delete;

    std::shared_ptr<client_state> client;
    std::string resource;
    std::shared_ptr<const lock_kind> kind;  ///< its keys, owner, place; the scripts of its release
    std::string token;  ///< the value the winning round wrote (a fair lock's, or a reentrant acquisition's)
    std::chrono::milliseconds node_timeout{0};
    int replicas = 0;  ///< lock_options::replicas: every extend waits for them too
    std::chrono::milliseconds replica_timeout{0};
    std::uint64_t fence = 0;
    std::vector<std::uint64_t>
        fences;                      ///< several resources, fenced: one per resource (`fence`: the first's)
    clock::time_point granted_at{};  ///< for the hold time of its released event
    /// Where the time slept is read: suspended_so_far(), or a unit test's own.
    std::chrono::nanoseconds (*suspension)() noexcept = &suspended_so_far;
    lease_fsm fsm;

    [[nodiscard]] bool held() const noexcept { return fsm.held(); }
    /// valid_until, less any time the machine was suspended since the round that gave it
    /// started: the steady clock stops in a suspension, the ttls on the servers do not.
    [[nodiscard]] clock::time_point valid_until_time() const noexcept {
        return fsm.valid_until(suspension());
    }
    void set_valid_until(clock::time_point t, std::chrono::nanoseconds suspended_at_start) noexcept {
        fsm.set_valid_until(t, suspended_at_start);
    }

    // --- the executor's, on the client's strand only (lease_runner.hpp) ----------------------------
    std::vector<std::shared_ptr<lost_waiter>> lost_waiters;
    /// In flight, by their fsm number; held by their replies' handlers, so that a loop torn down
    /// with an extend pending frees it and its lease.
    std::vector<std::weak_ptr<extend_round>> extends;
    std::shared_ptr<release_round> release;  ///< the holder's, until the fsm sends it
    // Made at their first arming: most leases have no watchdog and nobody waiting for their loss,
    // and a lease small enough for the allocator's per-thread cache is cheaper to make.
    std::unique_ptr<boost::asio::steady_timer> tick_timer;
    std::unique_ptr<boost::asio::steady_timer> validity_timer;
    std::vector<lease_input> deferred;  ///< inputs that came while steps ran, resumed after them
    bool running = false;

    /// The token-checked release on every node, by the script of this kind of lock.
    /// Its answers go to `to`; null: nobody waits for them.
    void send_release(std::chrono::milliseconds timeout, const std::shared_ptr<node_answers>& to) const {
        node_call release;
        kind->release(token, true, release);
        client->nodes().call_all(release, timeout, to, {});
    }
};

}  // namespace redlock::detail

#endif
