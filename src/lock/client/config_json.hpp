// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_LOCK_CLIENT_CONFIG_JSON_HPP
#define REDLOCK_LOCK_CLIENT_CONFIG_JSON_HPP

#include <redlock/config.hpp>
#include <redlock/error.hpp>

#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace redlock::detail {

/// Reads a client_config from the text of a JSON document: its syntax (a syntax error says its
/// line and column; two equal keys are an error, not the last one silently) and each field's
/// type and key, every error naming the key ("retry.min_delay_ms: expected ..."). The ranges
/// and the node URIs are client_config::validate()'s, which hand-built configs go through too.
[[nodiscard]] boost::system::error_code read_config_json(std::string_view text, client_config& out,
                                                         std::string& why);

/// The largest millisecond count a config field takes. The timing code adds these durations to
/// steady_clock time points and timers, which count nanoseconds in 64 bits: a value that does
/// not fit there would overflow long before it could be useful, so it is a configuration
/// error, not a very long timeout.
inline constexpr std::int64_t max_config_millis =
    std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::nanoseconds::max()).count();

/// Sets `why` to "client_config: <text>" and returns `code`.
boost::system::error_code config_error(std::string& why, std::string_view text,
                                       error code = error::invalid_config);

/// A double as the config's messages show it (NaN and infinities by name).
[[nodiscard]] std::string format_config_double(double d);

}  // namespace redlock::detail

#endif
