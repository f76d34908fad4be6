// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_LOCK_LEASE_OWNED_HOLDS_HPP
#define REDLOCK_LOCK_LEASE_OWNED_HOLDS_HPP

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace redlock::detail {

struct lease_state;

/// This client's fenced leases that an owner holds and may re-enter (lock_kind::reenters_fenced),
/// by lock key and owner: a re-entry made while one of them is still held and valid enters that
/// hold for sure (a quorum keeps it until its validity), so it takes that fence even when the
/// nodes that answer do not show a quorum of the hold (some may be unreachable). Strand only.
class owned_holds {
public:
    using clock = std::chrono::steady_clock;

    void add(const std::string& lock_key, const std::string& owner,
             const std::shared_ptr<lease_state>& lease);
    /// The fence of a held, still valid lease of `owner` on `lock_key`; 0 if there is none.
    [[nodiscard]] std::uint64_t live_fence(const std::string& lock_key, const std::string& owner,
                                           clock::time_point now);

private:
    std::map<std::pair<std::string, std::string>, std::vector<std::weak_ptr<lease_state>>> holds_;
};

}  // namespace redlock::detail

#endif
