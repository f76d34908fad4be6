// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_LOCK_ADMIN_RESOURCE_ADMIN_HPP
#define REDLOCK_LOCK_ADMIN_RESOURCE_ADMIN_HPP

#include "lock/client/client_state.hpp"
#include <redlock/inspection.hpp>
#include <redlock/resp/value.hpp>

#include <boost/asio/any_completion_handler.hpp>

#include <cstddef>
#include <memory>
#include <span>
#include <string>

namespace redlock::detail {

using inspect_handler = boost::asio::any_completion_handler<void(boost::system::error_code, inspection)>;
using force_release_handler =
    boost::asio::any_completion_handler<void(boost::system::error_code, std::size_t)>;

/// client::async_inspect: inspect.lua on every node, once, gathered into one inspection.
void start_inspect(std::shared_ptr<client_state> client, std::string resource, inspect_handler handler);

/// client::async_force_release: force_release.lua on every node, once.
void start_force_release(std::shared_ptr<client_state> client, std::string resource,
                         force_release_handler handler);

/// Fills `i.holders`, `i.owner` and `i.fence` from `i.nodes` and `i.quorum`: a holder counts when
/// a quorum of nodes list it.
void agree_on_holders(inspection& i);

}  // namespace redlock::detail

#endif
