// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_TEST_SUPPORT_CHILD_PROCESS_HPP
#define REDLOCK_TEST_SUPPORT_CHILD_PROCESS_HPP

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <csignal>
#include <string>
#include <thread>
#include <vector>

#include <spawn.h>
#include <sys/wait.h>

extern char** environ;

namespace redlock::test {

/// Starts `path` with `args`; the test fails if it cannot.
inline pid_t spawn_child(const std::string& path, const std::vector<std::string>& args) {
    std::vector<char*> argv;
    std::string program = path;
    argv.push_back(program.data());
    std::vector<std::string> copy = args;
    for (auto& a : copy)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = -1;
    int rc = posix_spawn(&pid, program.c_str(), nullptr, nullptr, argv.data(), environ);
    BOOST_TEST_REQUIRE(rc == 0, "posix_spawn " << path << ": " << rc);
    return pid;
}

/// Starts `command_line` through /bin/sh (so its arguments are quoted as a shell would quote
/// them) with stdout and stderr in the file `out`; `exec` keeps the PID the command's.
inline pid_t spawn_shell(const std::string& command_line, const std::string& out) {
    return spawn_child("/bin/sh", {"-c", "exec " + command_line + " >" + out + " 2>&1"});
}

/// What wait_child returns for a child that a signal ended: not 128 + the signal, which is also
/// an exit status (a shell's, or a program's that reports a signal it handled that way).
constexpr int killed_by(int signal) {
    return 256 + signal;
}

/// Waits for the child up to `limit`; kills it (by its PID) if it overruns. Returns its exit
/// status, killed_by(the signal) if a signal ended it, -1 if it overran.
inline int wait_child(pid_t pid, std::chrono::seconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    int status = 0;
    while (true) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : killed_by(WTERMSIG(status));
        if (std::chrono::steady_clock::now() >= deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            return -1;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

}  // namespace redlock::test

#endif
