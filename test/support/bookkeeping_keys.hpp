// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_TEST_SUPPORT_BOOKKEEPING_KEYS_HPP
#define REDLOCK_TEST_SUPPORT_BOOKKEEPING_KEYS_HPP

#include "support/redis_server.hpp"

#include <cstdint>

namespace redlock::test {

/// Keys on one server other than the clients' own bookkeeping, which they keep for good (with the
/// default prefix): the max_ttl recorded for the restart quarantine, and the failover
/// quarantine's marks and recorded length (failover_mark.lua). What a test that checks for keys
/// left behind counts.
inline std::int64_t keys_but_bookkeeping(const redis_server& s) {
    auto keys = s.command({"DBSIZE"}).integer;
    keys -= static_cast<std::int64_t>(s.command({"KEYS", "{redlock:failover:*}:*"}).elements.size());
    keys -= s.command({"EXISTS", "{redlock:}:max_ttl"}).integer;
    return keys;
}

}  // namespace redlock::test

#endif
