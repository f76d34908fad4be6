#ifndef REDLOCK_LOCK_LEASE_STATE_HPP
#define REDLOCK_LOCK_LEASE_STATE_HPP

#include "lock/client_state.hpp"
#include "lock/kinds/lock_kind.hpp"

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
    std::atomic<clock::rep> valid_until{0};
    std::atomic<unsigned> nodes_granted{0};
    /// Cleared by the first of: release, a failed extend that proves the lease gone, the
    /// destructor. Whoever clears it owns sending the release.
    std::atomic<bool> held{true};

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

    [[nodiscard]] clock::time_point valid_until_time() const noexcept {
        return clock::time_point(clock::duration(valid_until.load(std::memory_order_acquire)));
    }
    void set_valid_until(clock::time_point t) noexcept {
        valid_until.store(t.time_since_epoch().count(), std::memory_order_release);
    }
};

}  // namespace redlock::detail

#endif
