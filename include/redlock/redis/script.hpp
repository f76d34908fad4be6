// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_REDIS_SCRIPT_HPP
#define REDLOCK_REDIS_SCRIPT_HPP

#include <redlock/export.hpp>

#include <string_view>

namespace redlock::redis {

/// A Lua script known at build time: the connection loads it with SCRIPT LOAD on every
/// (re)connect and runs it with EVALSHA, falling back once to EVAL on NOSCRIPT.
struct REDLOCK_API script {
    std::string_view name;
    std::string_view sha1;  ///< 40 lowercase hex digits of the SHA-1 of `source`
    std::string_view source;
};

}  // namespace redlock::redis

#endif
