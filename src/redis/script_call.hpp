// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_REDIS_SCRIPT_CALL_HPP
#define REDLOCK_REDIS_SCRIPT_CALL_HPP

#include <redlock/redis/script.hpp>
#include <redlock/resp/value.hpp>

#include <span>
#include <string>
#include <string_view>

namespace redlock::redis::detail {

// How a script runs, in one place: EVALSHA first (the connection loads every script at each
// handshake), EVAL once when the server answers NOSCRIPT (SCRIPT FLUSH, a restarted or
// failed-over node), which also caches the script again. No I/O: connection.cpp sends them.

/// `EVALSHA <sha1> <numkeys> keys... args...`, encoded.
[[nodiscard]] std::string evalsha_payload(const script& s, std::span<const std::string_view> keys,
                                          std::span<const std::string_view> args);

/// The same call as EVAL with the script's source: an encoded EVALSHA of `s` rewritten, the
/// keys' and arguments' bytes copied as they are.
[[nodiscard]] std::string eval_payload(const script& s, const std::string& evalsha);

/// The server does not have the script: run it once more by eval_payload().
[[nodiscard]] inline bool lacks_script(const resp::value& reply) noexcept {
    return reply.error_code() == "NOSCRIPT";
}

}  // namespace redlock::redis::detail

#endif
