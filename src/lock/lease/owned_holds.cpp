// SPDX-License-Identifier: BSL-1.0
#include "lock/lease/owned_holds.hpp"

#include "lock/lease/lease_state.hpp"

#include <algorithm>

namespace redlock::detail {

void owned_holds::add(const std::string& lock_key, const std::string& owner,
                      const std::shared_ptr<lease_state>& lease) {
    auto& leases = holds_[{lock_key, owner}];
    // Ended leases go as new ones come, so the list stays as long as the live ones.
    std::erase_if(leases, [](const std::weak_ptr<lease_state>& w) { return w.expired(); });
    leases.push_back(lease);
}

std::uint64_t owned_holds::live_fence(const std::string& lock_key, const std::string& owner,
                                      clock::time_point now) {
    auto it = holds_.find({lock_key, owner});
    if (it == holds_.end()) return 0;
    std::uint64_t fence = 0;
    for (const auto& w : it->second) {
        const auto lease = w.lock();
        if (lease && lease->held() && lease->valid_until_time() > now) fence = std::max(fence, lease->fence);
    }
    std::erase_if(it->second, [](const std::weak_ptr<lease_state>& w) { return w.expired(); });
    if (it->second.empty()) holds_.erase(it);
    return fence;
}

}  // namespace redlock::detail
