// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_LOCK_ACQUIRE_LOCK_OPTIONS_CHECK_HPP
#define REDLOCK_LOCK_ACQUIRE_LOCK_OPTIONS_CHECK_HPP

#include <redlock/config.hpp>
#include <redlock/lock_options.hpp>

#include <boost/system/error_code.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace redlock::detail {

/// Every check of an acquire's request in one place: the resource name and `options` against
/// the client's configuration. On failure, the error and `why` (a sentence for the caller).
/// The resource name alone (every operation on a resource checks it): error::invalid_resource.
[[nodiscard]] boost::system::error_code validate_resource(const client_config& cfg,
                                                          const std::string& resource, std::string& why);

[[nodiscard]] boost::system::error_code validate_lock_options(const client_config& cfg,
                                                              const std::string& resource,
                                                              const lock_options& options, std::string& why);

/// Most resources one acquisition takes at once: each is a key of every script call.
inline constexpr std::size_t max_resources_at_once = 100;

/// A lock over several resources (client::async_acquire_all): `resources` sorted and distinct,
/// at least two, each a valid name; `options` as validate_lock_options says, and those of a
/// plain lock only, fenced or not (not reentrant, fair, a semaphore or a read-write lock).
[[nodiscard]] boost::system::error_code validate_several_resources(const client_config& cfg,
                                                                   const std::vector<std::string>& resources,
                                                                   const lock_options& options,
                                                                   std::string& why);

}  // namespace redlock::detail

#endif
