// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_REDIS_SERVER_VERSION_HPP
#define REDLOCK_REDIS_SERVER_VERSION_HPP

#include <redlock/export.hpp>

#include <optional>
#include <string_view>

namespace redlock::redis {

/// The oldest server a lock client works with: SET ... NX GET, the plain lock's round, came
/// with Redis 7.0.
inline constexpr std::string_view lock_min_server_version = "7.0";

/// Whether a server's `version` ("7.0.15": HELLO's "version", INFO's redis_version) is older
/// than `floor` ("major.minor"), compared as numbers ("10.0" is not older than "7.0"); nothing
/// when either does not start with "major.minor".
[[nodiscard]] REDLOCK_API std::optional<bool> older_than(std::string_view version,
                                                         std::string_view floor) noexcept;

}  // namespace redlock::redis

#endif
