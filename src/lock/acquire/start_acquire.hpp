// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_LOCK_ACQUIRE_START_ACQUIRE_HPP
#define REDLOCK_LOCK_ACQUIRE_START_ACQUIRE_HPP

#include "lock/client/client_state.hpp"
#include <redlock/diagnostics.hpp>
#include <redlock/lease.hpp>
#include <redlock/lock_options.hpp>

#include <boost/asio/any_completion_handler.hpp>

#include <memory>
#include <string>
#include <vector>

namespace redlock::detail {

using acquire_handler = boost::asio::any_completion_handler<void(boost::system::error_code, lease)>;

/// Starts one async_acquire: validates, then runs attempts on the client's strand until a
/// quorum grants, the wait is spent, or the operation is cancelled.
void start_acquire(std::shared_ptr<client_state> client, std::string resource, lock_options options,
                   diagnostics* diag, acquire_handler handler);

/// Starts one async_acquire_all: `resources` in any order, repeats merged; one name is
/// start_acquire's.
void start_acquire_all(std::shared_ptr<client_state> client, std::vector<std::string> resources,
                       lock_options options, diagnostics* diag, acquire_handler handler);

}  // namespace redlock::detail

#endif
