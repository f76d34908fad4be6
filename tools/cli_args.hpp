#ifndef REDLOCK_TOOLS_CLI_ARGS_HPP
#define REDLOCK_TOOLS_CLI_ARGS_HPP

#include <redlock/redis/node_spec.hpp>

#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::cli {

/// A command line the command cannot use; the message names the flag. Exit status 2.
struct usage_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/// "500ms", "10s", "2m", "1h", or a bare number of seconds; nullopt if it is none of those or
/// is negative or too large.
std::optional<std::chrono::milliseconds> parse_duration(std::string_view text);

/// Reads `--flag value`, `--flag=value` and bare `--switch` arguments in order; the first
/// argument that is not a flag, or everything after `--`, is positional.
class arg_reader {
public:
    arg_reader(int argc, char** argv, int first);

    /// The next flag's name ("--ttl"), or nullopt at the first positional argument or `--`.
    std::optional<std::string> next_flag();
    /// The value of the flag just read; usage_error if there is none.
    std::string value();
    /// The value as a duration; usage_error naming the flag if it is not one.
    std::chrono::milliseconds duration_value();
    /// The value as a whole number in [min, max]; usage_error naming the flag otherwise.
    long long number_value(long long min, long long max);
    /// Whether a `--` came, and the arguments after it (or the positional ones where it did not).
    [[nodiscard]] bool saw_separator() const noexcept { return separator_; }
    std::vector<std::string> rest();

private:
    std::vector<std::string> args_;
    std::size_t at_ = 0;
    std::string flag_;
    std::optional<std::string> inline_value_;
    bool separator_ = false;
};

/// Splits "a,b,,c" into {"a", "b", "c"}.
std::vector<std::string> split_list(std::string_view text);

/// Splits a --nodes list into node URIs (see redis::split_node_list).
using redis::split_node_list;

}  // namespace redlock::cli

#endif
