// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_TOOLS_COMMANDS_HPP
#define REDLOCK_TOOLS_COMMANDS_HPP

#include <CLI/CLI.hpp>

#include <functional>
#include <iosfwd>

namespace redlock::cli {

/// A subcommand of `redlock`: its flags, in the command line, and what runs once CLI11 has
/// parsed them, which returns the exit status. Usage errors found then (flags that go badly
/// together, no nodes) are thrown as usage_error (exit status 2).
struct subcommand {
    CLI::App* flags;
    std::function<int()> run;
};

/// Each adds its subcommand (and its flags) to `redlock`.
subcommand add_run_command(CLI::App& redlock);
subcommand add_hold_command(CLI::App& redlock);
subcommand add_check_command(CLI::App& redlock);
subcommand add_demo_command(CLI::App& redlock);
subcommand add_bench_command(CLI::App& redlock);
subcommand add_inspect_command(CLI::App& redlock);
subcommand add_unlock_command(CLI::App& redlock);

/// `redlock ARGS...`: parses the command line and runs the subcommand it names; returns the
/// exit status. --help goes to `out`, usage errors to `err`; the subcommands print to stdout
/// and stderr.
int redlock_main(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

/// Exit statuses of `redlock run` besides the command's own.
inline constexpr int exit_usage = 2;
inline constexpr int exit_lease_lost = 70;
inline constexpr int exit_not_acquired = 75;
/// The servers refused what no retry changes (sysexits' EX_CONFIG): the credentials, an ACL
/// permission, a command they lack, their version.
inline constexpr int exit_refused = 78;
inline constexpr int exit_command_not_found = 127;

}  // namespace redlock::cli

#endif
