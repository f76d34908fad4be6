// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_TOOLS_CLI_ARGS_HPP
#define REDLOCK_TOOLS_CLI_ARGS_HPP

#include <redlock/redis/node_spec.hpp>

#include <CLI/CLI.hpp>

#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::cli {

/// A command line the command cannot use, found once CLI11 has parsed it (flags that go
/// badly together, no nodes, a config that is not valid); the message names the flag. Exit
/// status 2, as CLI11's own parse errors.
struct usage_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/// "500ms", "10s", "1.5s", "2m", "1h", parts of those from the largest unit down ("1m30s",
/// "1h2m3.5s"), or a bare number of seconds ("3", "0.25"); nullopt if it is none of those, is
/// negative, finer than a millisecond ("1.0005s") or longer than a week.
std::optional<std::chrono::milliseconds> parse_duration(std::string_view text);

/// Adds `flag DURATION` to `command`: a value parse_duration reads goes to `into`, any other is
/// a parse error naming the flag ("--ttl: "10x" is not a duration (like 500ms, 1.5s, 1m30s)").
CLI::Option* add_duration_flag(CLI::App& command, const std::string& flag, std::chrono::milliseconds& into,
                               const std::string& description);
CLI::Option* add_duration_flag(CLI::App& command, const std::string& flag,
                               std::optional<std::chrono::milliseconds>& into,
                               const std::string& description);

/// Adds a flag that takes no value: `--fenced`, never `--fenced=no` (a parse error, as before
/// CLI11, whose flags would take it).
CLI::Option* add_switch(CLI::App& command, const std::string& flag, bool& into,
                        const std::string& description);

/// The usage line of a subcommand, in its --help: CLI11 2.1.2 cannot be given one, and the line
/// it makes cannot say `RESOURCE [RESOURCE...] -- CMD [ARG...]`.
class usage_formatter : public CLI::Formatter {
public:
    explicit usage_formatter(std::string usage) : usage_(std::move(usage)) {}
    std::string make_usage(const CLI::App* command, std::string name) const override;

private:
    std::string usage_;
};

/// The subcommand `name` of `redlock`, set up as every subcommand is: its usage line and the
/// `footer` (what it does, its exit statuses) in its --help; the first argument that is not a
/// flag ends the flags, as it did before CLI11: everything from there on is positional.
CLI::App* add_command(CLI::App& redlock, const std::string& name, const std::string& summary,
                      const std::string& usage, const std::string& footer);

/// Splits "a,b,,c" into {"a", "b", "c"}.
std::vector<std::string> split_list(std::string_view text);

/// Splits a --nodes list into node URIs (see redis::split_node_list).
using redis::split_node_list;

}  // namespace redlock::cli

#endif
