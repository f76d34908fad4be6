// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_TEST_SUPPORT_RESOURCE_NAMES_HPP
#define REDLOCK_TEST_SUPPORT_RESOURCE_NAMES_HPP

#include "lock/client/resource_keys.hpp"
#include "lock/kinds/kind_keys.hpp"

#include <string>
#include <vector>

namespace redlock::test {

/// Every key and channel name the lock kinds use for `resource` under `prefix`, the lock key
/// first: lock, released, fence, the fair queue's keys and a waiter's wake channel.
inline std::vector<std::string> every_name_of(const std::string& prefix, const std::string& resource) {
    const auto keys = detail::keys_for(prefix, resource);
    const auto queue = detail::fair_keys_for(keys);
    return {keys.lock,     keys.released,  detail::fence_key_for(keys), queue.queue, queue.deadlines,
            queue.tickets, queue.handoffs, queue.wake_prefix + "tok"};
}

}  // namespace redlock::test

#endif
