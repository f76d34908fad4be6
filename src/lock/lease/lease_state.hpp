// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_LOCK_LEASE_LEASE_STATE_HPP
#define REDLOCK_LOCK_LEASE_LEASE_STATE_HPP

#include "lock/client/client_state.hpp"
#include "lock/client/suspension.hpp"
#include "lock/kinds/lock_kind.hpp"
#include "lock/lease/lease_lifecycle.hpp"

#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace redlock::detail {

class lost_waiter;
class watchdog;

/// What a lease knows about itself. Shared by the lease and its pending extend or release, so
/// either may finish after the other is gone. The atomics are read by observers on any thread
/// and written on the client's strand.
struct lease_state {
    using clock = std::chrono::steady_clock;

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
    std::atomic<clock::rep> valid_until{0};
    /// suspended_so_far() when the round that gave valid_until started (see valid_until_time())
    std::atomic<std::chrono::nanoseconds::rep> suspended_before{0};
    /// Where the time slept is read: suspended_so_far(), or a unit test's own.
    std::chrono::nanoseconds (*suspension)() noexcept = &suspended_so_far;
    std::atomic<unsigned> nodes_granted{0};
    /// lease::handover() was called: a token found gone from a majority was adopted elsewhere.
    std::atomic<bool> handover_written{false};
    /// Leaves `held` once (lease_lifecycle.hpp), on any thread: whoever moves it owns the actions.
    std::atomic<lease_phase> phase{lease_phase::held};

    [[nodiscard]] bool held() const noexcept {
        return phase.load(std::memory_order_acquire) == lease_phase::held;
    }
    /// Applies `event` to the phase and returns what it asks for. Of two events racing to end a
    /// held lease, one gets the actions; the other finds it ended and gets none.
    lease_actions apply(lease_event event) noexcept {
        auto current = phase.load(std::memory_order_acquire);
        for (;;) {
            auto actions = on_lease_event(current, event);
            if (actions.next == current) return actions;
            if (phase.compare_exchange_weak(current, actions.next, std::memory_order_acq_rel)) return actions;
        }
    }

    // --- the end of the lease: on the client's strand only (see lease_end.hpp) -------------------
    bool ended = false;
    boost::system::error_code end_reason;  ///< lock_lost, or success for a release or a drop
    std::vector<std::shared_ptr<lost_waiter>> lost_waiters;
    std::shared_ptr<watchdog> dog;  ///< while it runs; end_lease() stops it and breaks the cycle
    std::optional<boost::asio::steady_timer> validity_timer;  ///< see watch_validity()

    /// The token-checked release on every node, by the script of this kind of lock.
    void send_release(std::chrono::milliseconds timeout, client_state::node_reply on_reply) const {
        node_call release;
        kind->release(token, true, release);
        client->send_call(release, std::vector<bool>(client->node_count(), true), timeout,
                          std::move(on_reply));
    }

    /// valid_until, less any time the machine was suspended since the round that gave it
    /// started: the steady clock stops in a suspension, the ttls on the servers do not.
    [[nodiscard]] clock::time_point valid_until_time() const noexcept {
        const auto t = clock::time_point(clock::duration(valid_until.load(std::memory_order_acquire)));
        return less_suspension(t, std::chrono::nanoseconds(suspended_before.load(std::memory_order_acquire)),
                               suspension());
    }
    /// `t`, counted on the steady clock from a round that started when suspended_so_far() was
    /// `suspended_at_start`. The two stores are not one: a reader between them pairs a new
    /// validity with the old reading, which differ only by a suspension in that instant.
    void set_valid_until(clock::time_point t, std::chrono::nanoseconds suspended_at_start) noexcept {
        suspended_before.store(suspended_at_start.count(), std::memory_order_release);
        valid_until.store(t.time_since_epoch().count(), std::memory_order_release);
    }
};

}  // namespace redlock::detail

#endif
