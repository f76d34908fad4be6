// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_LOCK_CLIENT_CLIENT_CLOSE_HPP
#define REDLOCK_LOCK_CLIENT_CLIENT_CLOSE_HPP

#include "lock/client/client_state.hpp"
#include "lock/client/open_work.hpp"

#include <memory>

namespace redlock::detail {

/// client::async_close. From its first call on, nothing new starts (client_closed). It cancels
/// the acquires in flight (operation_aborted), releases the leases held and waits for the
/// releases' replies (or, with `release_leases` false, stops extending them and leaves them to
/// their ttl), then sends each node a PING behind everything sent before and closes the
/// connections once it is answered (or timed out). Every async_close then completes with
/// success; one made after that completes at once.
void start_close(std::shared_ptr<client_state> client, bool release_leases, open_work::close_handler handler);

}  // namespace redlock::detail

#endif
