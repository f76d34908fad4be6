// The redis_server fixture itself: every other integration test trusts it to start real servers,
// to simulate hangs and crashes faithfully, and never to leak a process.

#include "support/redis_server.hpp"
#include <redlock/resp/value.hpp>

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

using namespace std::chrono_literals;
using redlock::resp::type;
using redlock::test::redis_server;
using redlock::test::redis_server_options;
using steady = std::chrono::steady_clock;

bool can_connect(unsigned short port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    BOOST_REQUIRE(fd >= 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(port);
    const bool ok = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
    ::close(fd);
    return ok;
}

// Gone means no process and no zombie: kill(pid, 0) succeeds on a zombie.
bool process_gone(pid_t pid) {
    return ::kill(pid, 0) == -1 && errno == ESRCH;
}

// The state letter of /proc/<pid>/stat: R, S, T (stopped), Z, ...
char process_state(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto paren = stat.rfind(')');
    return paren == std::string::npos || paren + 2 >= stat.size() ? '?' : stat[paren + 2];
}

// One `field:value` line of an INFO reply.
std::string info_field(const redlock::resp::value& info, std::string_view field) {
    const std::string key = std::string(field) + ":";
    const auto pos = info.str.find(key);
    if (pos == std::string::npos) return {};
    const auto start = pos + key.size();
    return info.str.substr(start, info.str.find_first_of("\r\n", start) - start);
}

void check_simple(const redlock::resp::value& v, std::string_view expected) {
    BOOST_TEST(static_cast<int>(v.kind) == static_cast<int>(type::simple_string));
    BOOST_TEST(v.str == expected);
}

void check_bulk(const redlock::resp::value& v, std::string_view expected) {
    BOOST_TEST(static_cast<int>(v.kind) == static_cast<int>(type::bulk_string));
    BOOST_TEST(v.str == expected);
}

// How the forked "test process" of the crash tests ends.
enum class child_death { abort, sigkill, exit_without_destructors };

// What the child sends back; one write below PIPE_BUF, so it arrives whole.
struct child_report {
    pid_t server_pid = -1;
    bool handler_installed = false;  // the fixture took over SIGABRT
    char dir[512] = {};
};

struct crash_outcome {
    int child_status = 0;
    child_report report;
    pid_t server_pid = -1;
    bool server_gone = false;
    bool reaped_by_us = false;  // the server was reparented to us and we collected it
    int server_status = 0;
};

// Forks a child that starts a server (leaked on purpose: no destructor may run), sends its PID
// back through a pipe and dies as `how` says; then waits up to 2 s for that server to vanish.
crash_outcome run_crashing_child(child_death how) {
    // Orphans are reparented to init, and a container's PID 1 may never reap them: they would
    // stay zombies and kill(pid, 0) would keep succeeding. As a subreaper we adopt the server.
    BOOST_REQUIRE(::prctl(PR_SET_CHILD_SUBREAPER, 1) == 0);
    struct subreaper_reset {
        ~subreaper_reset() { ::prctl(PR_SET_CHILD_SUBREAPER, 0); }
    } reset;

    int fds[2];
    BOOST_REQUIRE(::pipe(fds) == 0);
    // Buffered test output would otherwise be written twice, once by the child.
    std::cout.flush();
    std::cerr.flush();
    std::fflush(nullptr);
    const pid_t child = ::fork();
    BOOST_REQUIRE(child >= 0);
    if (child == 0) {
        ::close(fds[0]);
        // Boost.Test's execution monitor catches SIGABRT, SIGSEGV, ... by siglongjmp-ing back
        // into the test runner: in this copy of the process that would resume the test suite.
        // With the default action back, the child really dies, and the fixture installs its own
        // crash handlers (it only takes over signals that nobody else handles).
        for (int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGALRM})
            std::signal(sig, SIG_DFL);
        child_report report;
        try {
            auto* leaked = new redis_server();
            report.server_pid = leaked->pid();
            if (leaked->dir().size() >= sizeof report.dir) ::_exit(3);
            leaked->dir().copy(report.dir, sizeof report.dir - 1);
        } catch (...) {
            ::_exit(3);
        }
        struct sigaction current {};
        ::sigaction(SIGABRT, nullptr, &current);
        report.handler_installed = current.sa_handler != SIG_DFL;
        if (::write(fds[1], &report, sizeof report) != static_cast<ssize_t>(sizeof report)) ::_exit(4);
        switch (how) {
            case child_death::abort:
                std::abort();
            case child_death::sigkill:
                ::raise(SIGKILL);
                break;
            case child_death::exit_without_destructors:
                std::exit(0);
        }
        ::_exit(5);
    }
    ::close(fds[1]);

    crash_outcome out;
    const auto n = ::read(fds[0], &out.report, sizeof out.report);
    out.server_pid = out.report.server_pid;
    ::close(fds[0]);

    // Never hang the suite on a stuck child.
    const auto child_deadline = steady::now() + 10s;
    while (::waitpid(child, &out.child_status, WNOHANG) == 0) {
        if (steady::now() > child_deadline) {
            ::kill(child, SIGKILL);
            ::waitpid(child, &out.child_status, 0);
            BOOST_FAIL("the crashing child did not die");
        }
        std::this_thread::sleep_for(1ms);
    }
    BOOST_REQUIRE(n == static_cast<ssize_t>(sizeof out.report));
    BOOST_REQUIRE(out.server_pid > 0);

    const auto deadline = steady::now() + 2s;
    while (steady::now() < deadline) {
        if (!out.reaped_by_us && ::waitpid(out.server_pid, &out.server_status, WNOHANG) == out.server_pid) {
            out.reaped_by_us = true;
        }
        if (process_gone(out.server_pid)) {
            out.server_gone = true;
            break;
        }
        std::this_thread::sleep_for(5ms);
    }
    if (!out.server_gone) {
        // Leave nothing behind even when the test fails: the server is ours (adopted).
        ::kill(out.server_pid, SIGKILL);
        ::waitpid(out.server_pid, nullptr, 0);
    }
    return out;
}

// After SIGKILL/abort no code of the dead process could remove the server's temp dir.
void remove_dir(const crash_outcome& out) {
    std::error_code ec;
    std::filesystem::remove_all(out.report.dir, ec);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(redis_fixture)

BOOST_AUTO_TEST_CASE(test_started_server_answers_on_its_own_port) {
    redis_server s;
    BOOST_TEST(s.running());
    BOOST_TEST(s.pid() > 0);
    BOOST_TEST(s.port() > 0);
    BOOST_TEST(s.host() == "127.0.0.1");
    BOOST_TEST(s.uri() == "redis://127.0.0.1:" + std::to_string(s.port()));

    check_simple(s.command({"PING"}), "PONG");

    // The process answering on port() is the one we started, and it runs with our settings.
    const auto info = s.command({"INFO", "server"});
    BOOST_TEST(info_field(info, "process_id") == std::to_string(s.pid()));
    BOOST_TEST(info_field(info, "tcp_port") == std::to_string(s.port()));
    const auto dir = s.command({"CONFIG", "GET", "dir"});
    BOOST_REQUIRE(dir.elements.size() == 2u);
    BOOST_TEST(dir.elements[1].str == std::filesystem::canonical(s.dir()).string());
    const auto aof = s.command({"CONFIG", "GET", "appendonly"});
    BOOST_REQUIRE(aof.elements.size() == 2u);
    BOOST_TEST(aof.elements[1].str == "no");
    BOOST_TEST(std::filesystem::is_socket(s.unix_socket()));
    BOOST_TEST(s.unix_socket().starts_with(s.dir()));
    BOOST_TEST(std::filesystem::path(s.dir()).filename().string().starts_with("redlock-test-"));

    const std::string binary("v\r\n\0x", 5);  // CR, LF and NUL travel intact
    check_simple(s.command({"SET", "{t}:k", binary}), "OK");
    check_bulk(s.command({"GET", "{t}:k"}), binary);
    const auto missing = s.command({"GET", "{t}:missing"});
    BOOST_TEST(missing.is_null());
    const auto err = s.command({"NO-SUCH-COMMAND"});
    BOOST_TEST(err.is_error());
    BOOST_TEST(err.error_code() == "ERR");
}

BOOST_AUTO_TEST_CASE(test_paused_server_times_out_then_recovers_on_resume) {
    redis_server s;
    check_simple(s.command({"SET", "k", "1"}), "OK");

    s.pause();
    BOOST_TEST(process_state(s.pid()) == 'T');
    BOOST_TEST(s.running());  // hung, not dead
    const auto t0 = steady::now();
    BOOST_CHECK_THROW(s.command({"PING"}, 200ms), std::runtime_error);
    const auto elapsed = steady::now() - t0;
    BOOST_TEST((elapsed >= 190ms));
    BOOST_TEST((elapsed < 2s));

    s.resume();
    BOOST_TEST(process_state(s.pid()) != 'T');
    check_bulk(s.command({"GET", "k"}), "1");
}

BOOST_AUTO_TEST_CASE(test_stop_of_a_paused_server_does_not_hang) {
    redis_server s;
    const pid_t pid = s.pid();
    s.pause();
    const auto t0 = steady::now();
    s.stop();
    BOOST_TEST((steady::now() - t0 < 2s));  // SIGCONT first, else SIGTERM waits for the 5 s SIGKILL
    BOOST_TEST(process_gone(pid));
}

BOOST_AUTO_TEST_CASE(test_kill9_without_persistence_loses_data) {
    redis_server s;
    const auto port = s.port();
    const pid_t old_pid = s.pid();
    check_simple(s.command({"SET", "k", "v"}), "OK");

    s.kill9();
    BOOST_TEST(!s.running());
    BOOST_TEST(s.pid() == -1);
    BOOST_TEST(process_gone(old_pid));
    BOOST_TEST(!can_connect(port));
    BOOST_CHECK_THROW(s.command({"PING"}, 500ms), std::runtime_error);

    s.restart();
    BOOST_TEST(s.running());
    BOOST_TEST(s.port() == port);
    BOOST_TEST(s.pid() != old_pid);
    BOOST_TEST(info_field(s.command({"INFO", "server"}), "process_id") == std::to_string(s.pid()));
    BOOST_TEST(s.command({"GET", "k"}).is_null());
}

BOOST_AUTO_TEST_CASE(test_kill9_with_aof_fsync_always_keeps_data) {
    redis_server_options opts;
    opts.appendonly = true;
    opts.appendfsync = "always";
    redis_server s(opts);
    const auto fsync = s.command({"CONFIG", "GET", "appendfsync"});
    BOOST_REQUIRE(fsync.elements.size() == 2u);
    BOOST_TEST(fsync.elements[1].str == "always");
    check_simple(s.command({"SET", "k", "survives"}), "OK");
    check_simple(s.command({"SET", "ttl", "x", "PX", "600000"}), "OK");

    const auto port = s.port();
    s.kill9();
    s.restart();
    BOOST_TEST(s.port() == port);
    check_bulk(s.command({"GET", "k"}), "survives");
    const auto pttl = s.command({"PTTL", "ttl"});
    BOOST_TEST(static_cast<int>(pttl.kind) == static_cast<int>(type::integer));
    BOOST_TEST(pttl.integer > 0);
    BOOST_TEST(pttl.integer <= 600000);
}

BOOST_AUTO_TEST_CASE(test_stop_reaps_frees_port_and_destructor_removes_dir) {
    auto s = std::make_unique<redis_server>();
    const pid_t pid = s->pid();
    const auto port = s->port();
    const std::string dir = s->dir();
    BOOST_TEST(std::filesystem::is_directory(dir));
    BOOST_TEST(can_connect(port));

    s->stop();
    BOOST_TEST(!s->running());
    BOOST_TEST(s->pid() == -1);
    BOOST_TEST(process_gone(pid));  // reaped: not even a zombie
    BOOST_TEST(!can_connect(port));
    s->stop();  // idempotent
    BOOST_TEST(std::filesystem::is_directory(dir));

    s.reset();
    BOOST_TEST(!std::filesystem::exists(dir));
}

BOOST_AUTO_TEST_CASE(test_requirepass_is_used_by_command) {
    redis_server_options opts;
    opts.extra_args = {"--requirepass", "s3cret"};
    redis_server s(opts);
    check_simple(s.command({"PING"}), "PONG");
    const auto acl = s.command({"ACL", "WHOAMI"});
    check_bulk(acl, "default");
}

BOOST_AUTO_TEST_CASE(test_bad_option_throws_with_log_tail) {
    redis_server_options opts;
    opts.extra_args = {"--no-such-option", "1"};
    BOOST_CHECK_EXCEPTION(redis_server{opts}, std::runtime_error, [](const std::runtime_error& e) {
        const std::string what = e.what();
        return what.find("Bad directive") != std::string::npos &&
               what.find("no-such-option") != std::string::npos;
    });
}

BOOST_AUTO_TEST_CASE(test_start_five_servers) {
    const auto servers = redlock::test::start_redis_servers(5);
    BOOST_REQUIRE(servers.size() == 5u);
    std::set<unsigned short> ports;
    std::set<std::string> dirs;
    for (const auto& s : servers) {
        ports.insert(s->port());
        dirs.insert(s->dir());
        check_simple(s->command({"PING"}), "PONG");
        BOOST_TEST(info_field(s->command({"INFO", "server"}), "process_id") == std::to_string(s->pid()));
    }
    BOOST_TEST(ports.size() == 5u);
    BOOST_TEST(dirs.size() == 5u);
}

// The point of the registry, the signal handlers and PR_SET_PDEATHSIG: a test that dies without
// unwinding must not leave redis-server processes behind.
BOOST_AUTO_TEST_CASE(test_server_dies_when_test_process_aborts) {
    const auto out = run_crashing_child(child_death::abort);
    remove_dir(out);
    BOOST_TEST(out.report.handler_installed);
    BOOST_TEST(WIFSIGNALED(out.child_status));
    BOOST_TEST(WTERMSIG(out.child_status) == SIGABRT);  // the handler re-raised with the default action
    BOOST_TEST(out.server_gone);
    BOOST_TEST(out.reaped_by_us);
    BOOST_TEST(WIFSIGNALED(out.server_status));
    BOOST_TEST(WTERMSIG(out.server_status) == SIGKILL);
}

BOOST_AUTO_TEST_CASE(test_server_dies_when_test_process_is_sigkilled) {
    // No handler can run: only PR_SET_PDEATHSIG can take the server down.
    const auto out = run_crashing_child(child_death::sigkill);
    remove_dir(out);
    BOOST_TEST(WIFSIGNALED(out.child_status));
    BOOST_TEST(WTERMSIG(out.child_status) == SIGKILL);
    BOOST_TEST(out.server_gone);
    BOOST_TEST(out.reaped_by_us);
    BOOST_TEST(WTERMSIG(out.server_status) == SIGKILL);
}

BOOST_AUTO_TEST_CASE(test_server_dies_when_test_process_exits_without_destructors) {
    // exit() runs atexit handlers but not the destructors of leaked objects.
    const auto out = run_crashing_child(child_death::exit_without_destructors);
    BOOST_TEST(WIFEXITED(out.child_status));
    BOOST_TEST(WEXITSTATUS(out.child_status) == 0);
    BOOST_TEST(out.server_gone);
    // The atexit cleanup reaped it before the child exited, so it was never ours to collect.
    BOOST_TEST(!out.reaped_by_us);
    BOOST_TEST(!std::filesystem::exists(out.report.dir));  // and removed its dir
    remove_dir(out);
}

BOOST_AUTO_TEST_SUITE_END()
