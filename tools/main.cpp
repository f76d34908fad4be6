// redlock: distributed locks on Redis from the command line. See `redlock --help`.
#include "cli_args.hpp"
#include "commands.hpp"

#include <boost/system/system_error.hpp>

#include <cstdio>
#include <exception>
#include <string_view>

namespace {

constexpr const char* help =
    "usage: redlock COMMAND [options]\n"
    "\n"
    "commands:\n"
    "  run     hold a lock while a command runs          (redlock run --help)\n"
    "  check   say what makes a deployment's locks unsafe (redlock check --help)\n"
    "  demo    Redlock at work on local servers, with nodes killed under it (redlock demo --help)\n"
    "  bench   acquire + release pairs/s and latencies against PING (redlock bench --help)\n"
    "  inspect what holds a resource on every node         (redlock inspect --help)\n"
    "  unlock  --force: an operator's release of a resource (redlock unlock --help)\n"
    "\n"
    "The full benchmark (node-redlock, the floors, hand-offs) is bench/run_lock_bench in the source tree.\n";

}  // namespace

int main(int argc, char** argv) {
    using namespace redlock::cli;
    if (argc < 2) {
        std::fputs(help, stderr);
        return exit_usage;
    }
    const std::string_view command = argv[1];
    try {
        if (command == "run") return run_command(argc, argv, 2);
        if (command == "check") return check_command(argc, argv, 2);
        if (command == "demo") return demo_command(argc, argv, 2);
        if (command == "bench") return bench_command(argc, argv, 2);
        if (command == "inspect") return inspect_command(argc, argv, 2);
        if (command == "unlock") return unlock_command(argc, argv, 2);
        if (command == "--help" || command == "-h" || command == "help") {
            std::fputs(help, stdout);
            return 0;
        }
        std::fprintf(stderr, "redlock: unknown command \"%s\"\n\n%s", argv[1], help);
        return exit_usage;
    } catch (const usage_error& e) {
        std::fprintf(stderr, "redlock %s: %s\n", argv[1], e.what());
        return exit_usage;
    } catch (const boost::system::system_error& e) {
        std::fprintf(stderr, "redlock %s: %s\n", argv[1], e.what());
        return exit_usage;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "redlock %s: %s\n", argv[1], e.what());
        return 1;
    }
}
