// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_LOCK_LEASE_LEASE_OPS_HPP
#define REDLOCK_LOCK_LEASE_LEASE_OPS_HPP

#include "lock/lease/lease_state.hpp"
#include <redlock/diagnostics.hpp>

#include <boost/asio/any_completion_handler.hpp>

#include <chrono>
#include <memory>

namespace redlock::detail {

using lease_handler = boost::asio::any_completion_handler<void(boost::system::error_code)>;

/// One async_extend: token-checked PEXPIRE on all N nodes, decided by quorum within the
/// remaining validity.
void start_extend(std::shared_ptr<lease_state> state, std::chrono::milliseconds ttl, diagnostics* diag,
                  lease_handler handler);

/// One async_release: token-checked DEL (+ SPUBLISH) on all N nodes. The caller has already
/// moved the lease out of `held` (lease_event::release_called).
void start_release(std::shared_ptr<lease_state> state, diagnostics* diag, lease_handler handler);

/// One async_check: check.lua on all N nodes, decided by quorum; the lease is not changed.
void start_check(std::shared_ptr<lease_state> state, diagnostics* diag, lease_handler handler);

/// Completes `handler` with `ec` as if posted: for operations refused before they start.
void complete_refused(const boost::asio::any_io_executor& ex, lease_handler handler,
                      boost::system::error_code ec);

}  // namespace redlock::detail

#endif
