// SPDX-License-Identifier: BSL-1.0
#include "cli_args.hpp"
#include "commands.hpp"

#include <boost/system/system_error.hpp>

#include <CLI/CLI.hpp>

#include <exception>
#include <ostream>
#include <string>
#include <vector>

namespace redlock::cli {

namespace {

constexpr const char* redlock_footer =
    "Each command's flags: redlock COMMAND --help.\n"
    "The full benchmark (node-redlock, the floors, hand-offs) is bench/run_lock_bench in the source tree.\n";

// The list of commands. Not redlock.help(), which gives the help of the command parsed, if any
// (`help` is one).
std::string commands_help(const CLI::App& redlock) {
    return redlock.get_formatter()->make_help(&redlock, redlock.get_name(), CLI::AppFormatMode::Normal);
}

// The parse error of a command line that named no command, or an unknown one.
void say_no_command(const CLI::App& redlock, std::ostream& err) {
    const auto extras = redlock.remaining();
    if (extras.empty()) {
        err << commands_help(redlock);
    } else if (extras.front().starts_with('-')) {
        err << "redlock: unknown option " << extras.front() << "\n\n" << commands_help(redlock);
    } else {
        err << "redlock: unknown command \"" << extras.front() << "\"\n\n" << commands_help(redlock);
    }
}

// What CLI11 found wrong in the command line of `command`. An unknown flag, as before CLI11:
// CLI11 says "The following argument was not expected: --bogus".
// (`remaining` keeps the `--` it passed too.)
std::string parse_error_text(const CLI::App& command, const CLI::ParseError& e) {
    if (dynamic_cast<const CLI::ExtrasError*>(&e) == nullptr) return e.what();
    for (const auto& extra : command.remaining()) {
        if (extra != "--" && extra.starts_with('-')) return "unknown option " + extra;
    }
    return e.what();
}

}  // namespace

int redlock_main(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
    CLI::App redlock("distributed locks on Redis from the command line", "redlock");
    redlock.require_subcommand(1);
    // As before CLI11 (the .deb's test looks for it: test/cmake_install_test/deb.cmake).
    auto format = std::make_shared<usage_formatter>("redlock COMMAND [options]");
    format->column_width(28);
    redlock.formatter(format);
    // A flag given twice: the last one counts, as it did before CLI11 (whose default refuses).
    redlock.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    redlock.footer(redlock_footer);
    redlock.set_version_flag("--version", std::string("redlock ") + REDLOCK_VERSION,
                             "print the version and exit");
    const std::vector<subcommand> commands = {add_run_command(redlock),   add_hold_command(redlock),
                                              add_check_command(redlock), add_demo_command(redlock),
                                              add_bench_command(redlock), add_inspect_command(redlock),
                                              add_unlock_command(redlock)};
    // `redlock help`, as `redlock --help` (whatever follows it, as before CLI11); not listed
    // among the commands.
    auto* help = redlock.add_subcommand("help", "this text")->group("")->allow_extras();
    if (argc < 2) {
        err << commands_help(redlock);
        return exit_usage;
    }
    try {
        redlock.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return redlock.exit(e, out, err);  // the help of the command it names, if any
    } catch (const CLI::CallForVersion& e) {
        return redlock.exit(e, out, err);
    } catch (const CLI::ParseError& e) {
        const auto named = redlock.get_subcommands();
        if (named.empty() || named.front() == help) {
            say_no_command(redlock, err);
        } else {
            const auto& name = named.front()->get_name();
            err << "redlock " << name << ": " << parse_error_text(*named.front(), e) << " (see redlock "
                << name << " --help)\n";
        }
        return exit_usage;
    }
    if (help->parsed()) {
        out << commands_help(redlock);
        return 0;
    }
    for (const auto& command : commands) {
        if (!command.flags->parsed()) continue;
        const auto& name = command.flags->get_name();
        try {
            return command.run();
        } catch (const usage_error& e) {
            err << "redlock " << name << ": " << e.what() << "\n";
            return exit_usage;
        } catch (const boost::system::system_error& e) {
            err << "redlock " << name << ": " << e.what() << "\n";
            return exit_usage;
        } catch (const std::exception& e) {
            err << "redlock " << name << ": " << e.what() << "\n";
            return 1;
        }
    }
    return exit_usage;  // not reached: CLI11 requires one command
}

}  // namespace redlock::cli
