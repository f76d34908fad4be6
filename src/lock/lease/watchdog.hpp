// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_LOCK_LEASE_WATCHDOG_HPP
#define REDLOCK_LOCK_LEASE_WATCHDOG_HPP

#include "lock/lease/lease_state.hpp"
#include "lock/lease/watchdog_schedule.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/system/error_code.hpp>

#include <chrono>
#include <memory>

namespace redlock::detail {

/// Keeps one lease alive, as its watchdog_schedule says: extends it to the ttl every period,
/// retries a failed extension soon, and gives the lease up when max_hold is reached; the lease
/// is lost when no quorum confirmed an extension before the validity ran out (through the
/// lease's watch_validity(), shared with its async_wait_lost waiters). A denial by a majority ends it at once
/// (the extend does that). Lives on the client's strand from start() until end_lease() calls stop(): after
/// that it sends nothing. It does not keep the lease alive: the lease owns it (lease_state::dog), and a lease
/// nobody holds any more ends through its own destructor. A loop torn down with the lease pending then frees
/// both.
class watchdog : public std::enable_shared_from_this<watchdog> {
public:
    using clock = std::chrono::steady_clock;

    watchdog(std::shared_ptr<lease_state> state, watchdog_schedule schedule);

    ~watchdog();
    watchdog(const watchdog&) = delete;
    watchdog& operator=(const watchdog&) = delete;

    void start();
    void stop();

private:
    void schedule(clock::time_point at);
    void renew();
    void on_renewed(boost::system::error_code ec);

    std::weak_ptr<lease_state> state_;
    std::shared_ptr<client_state> client_;
    watchdog_schedule schedule_;
    boost::asio::steady_timer tick_;
    bool started_ = false;
    bool stopped_ = false;
};

}  // namespace redlock::detail

#endif
