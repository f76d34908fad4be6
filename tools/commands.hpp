#ifndef REDLOCK_TOOLS_COMMANDS_HPP
#define REDLOCK_TOOLS_COMMANDS_HPP

namespace redlock::cli {

/// The subcommands of `redlock`; each gets the arguments after its name and returns the exit
/// status. Usage errors are thrown as usage_error (exit status 2).
int run_command(int argc, char** argv, int first);
int check_command(int argc, char** argv, int first);
int demo_command(int argc, char** argv, int first);
int bench_command(int argc, char** argv, int first);
int inspect_command(int argc, char** argv, int first);
int unlock_command(int argc, char** argv, int first);

/// Exit statuses of `redlock run` besides the command's own.
inline constexpr int exit_usage = 2;
inline constexpr int exit_lease_lost = 70;
inline constexpr int exit_not_acquired = 75;
inline constexpr int exit_command_not_found = 127;

}  // namespace redlock::cli

#endif
