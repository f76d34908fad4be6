// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_LOCK_LEASE_LOST_WAITER_HPP
#define REDLOCK_LOCK_LEASE_LOST_WAITER_HPP

#include "lock/lease/lease_ops.hpp"
#include "lock/lease/lease_state.hpp"

#include <boost/system/error_code.hpp>

#include <memory>

namespace redlock::detail {

/// One lease::async_wait_lost. The lease keeps it (lease_state::lost_waiters) until it ends;
/// it does not keep the lease, so that a loop torn down with both pending frees both.
class lost_waiter : public std::enable_shared_from_this<lost_waiter> {
public:
    lost_waiter(const std::shared_ptr<lease_state>& state, lease_handler handler);

    /// On the initiating thread, before start().
    void connect_cancellation();
    void start(const std::shared_ptr<lease_state>& state);
    void cancel();
    void complete(boost::system::error_code ec);

private:
    std::weak_ptr<lease_state> state_;
    std::shared_ptr<client_state> client_;
    lease_handler handler_;
    bool done_ = false;
};

void start_wait_lost(std::shared_ptr<lease_state> state, lease_handler handler);

}  // namespace redlock::detail

#endif
