// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_LOCK_LEASE_ADOPT_OP_HPP
#define REDLOCK_LOCK_LEASE_ADOPT_OP_HPP

#include "lock/client/client_state.hpp"
#include <redlock/diagnostics.hpp>
#include <redlock/lease.hpp>
#include <redlock/lock_options.hpp>

#include <boost/asio/any_completion_handler.hpp>

#include <memory>
#include <string>

namespace redlock::detail {

using adopt_handler = boost::asio::any_completion_handler<void(boost::system::error_code, lease)>;

/// client::async_adopt: the record's kind with the adopter's `options`, one extend to `ttl` on
/// every node, decided by quorum within the validity it gives; a lease (with its watchdog, if
/// asked) when a quorum confirmed.
void start_adopt(std::shared_ptr<client_state> client, std::string text, lock_options options,
                 diagnostics* diag, adopt_handler handler);

}  // namespace redlock::detail

#endif
