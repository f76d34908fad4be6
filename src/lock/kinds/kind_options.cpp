// SPDX-License-Identifier: BSL-1.0
#include "lock/kinds/kind_options.hpp"

#include <redlock/error.hpp>

#include <chrono>

namespace redlock::detail {

namespace {
// A permit is a member of one sorted set: a count far above this is a mistake, not a limit.
constexpr int max_permits = 1000000;
}  // namespace

std::string_view kind_option_name(kind_trait trait) noexcept {
    switch (trait) {
        case kind_trait::reentrant:
            return "lock_options::reentrant";
        case kind_trait::fair:
            return "lock_options::fair";
        case kind_trait::fenced:
            return "lock_options::fenced";
        case kind_trait::semaphore:
            return "lock_options::permits";
        case kind_trait::read:
            return "lock_options::mode read";
        case kind_trait::write:
            return "lock_options::mode write";
        case kind_trait::several:
            return "several resources";
        case kind_trait::count:
            break;
    }
    return "?";
}

boost::system::error_code check_kind_options(const lock_options& o, bool several, std::string& why) {
    if (o.reentrant != !o.owner.empty() || o.owner.str().size() > 256) {
        why = "lock_options::owner must be set (at most 256 bytes) with reentrant, and only with it";
        return error::invalid_config;
    }
    if (o.permits < 0 || o.permits > max_permits) {
        why = "lock_options::permits must be in [0, " + std::to_string(max_permits) + "]";
        return error::invalid_config;
    }
    if ((o.fair || o.mode != lock_mode::exclusive) && o.queue_timeout < std::chrono::milliseconds(3)) {
        why = "a fair or read-write lock's lock_options::queue_timeout must be at least 3 ms";
        return error::invalid_config;
    }
    if (const auto conflict = first_conflict(traits_of(o, several))) {
        why = describe(*conflict, kind_option_name);
        return error::invalid_config;
    }
    return {};
}

}  // namespace redlock::detail
