// SPDX-License-Identifier: BSL-1.0
// The redis_server fixture itself: every other integration test trusts it to start real servers,
// to simulate hangs and crashes faithfully, and never to leak a process.

#include "support/redis_cluster.hpp"
#include "support/redis_sentinel.hpp"
#include "support/redis_server.hpp"
#include "support/wait_until.hpp"
#include <redlock/resp/value.hpp>

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
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
using redlock::test::redis_cluster;
using redlock::test::redis_cluster_options;
using redlock::test::redis_sentinel_group;
using redlock::test::redis_sentinel_options;
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

// ---- the redis_cluster fixture ----

std::int64_t elapsed_ms(steady::time_point since) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(steady::now() - since).count();
}

std::uint16_t key_slot_of(redis_server& s, const std::string& key) {
    const auto reply = s.command({"CLUSTER", "KEYSLOT", key});
    BOOST_REQUIRE_MESSAGE(reply.kind == type::integer, "CLUSTER KEYSLOT " << key << ": " << to_string(reply));
    return static_cast<std::uint16_t>(reply.integer);
}

std::string address(const redis_server& s) {
    return "127.0.0.1:" + std::to_string(s.port());
}

// ROLE's first element: "master" or "slave".
std::string role(const redis_server& s) {
    const auto reply = s.command({"ROLE"});
    BOOST_REQUIRE_MESSAGE(!reply.elements.empty(), "ROLE: " << to_string(reply));
    return reply.elements[0].str;
}

// The redirection a server answers for `key`, e.g. "MOVED 3999 127.0.0.1:6381"; empty if it
// serves the key itself.
std::string redirection(const redis_server& s, const std::string& key) {
    const auto reply = s.command({"GET", key});
    if (reply.error_code() == "MOVED" || reply.error_code() == "ASK") return reply.str;
    BOOST_TEST(!reply.is_error(), address(s) << " GET " << key << ": " << to_string(reply));
    return {};
}

// Lines of a CLUSTER NODES reply whose flags (third field, e.g. "myself,master") include `flag`.
int nodes_with_flag(const std::string& nodes, const std::string& flag) {
    int n = 0;
    std::istringstream lines(nodes);
    for (std::string line; std::getline(lines, line);) {
        std::istringstream fields(line);
        std::string id, addr, flags;
        fields >> id >> addr >> flags;
        if (("," + flags + ",").find("," + flag + ",") != std::string::npos) ++n;
    }
    return n;
}

// PIDs of this process's children (all threads'): what a fixture left running.
std::set<pid_t> child_pids() {
    std::set<pid_t> pids;
    for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
        std::ifstream in(task.path() / "children");
        pid_t pid = 0;
        while (in >> pid)
            pids.insert(pid);
    }
    return pids;
}

// ---- the redis_sentinel_group fixture ----

// The port of the master a sentinel names (SENTINEL GET-MASTER-ADDR-BY-NAME), on 127.0.0.1.
unsigned short named_master_port(const redis_server& sentinel, const std::string& name) {
    const auto reply = sentinel.command({"SENTINEL", "GET-MASTER-ADDR-BY-NAME", name});
    BOOST_TEST_REQUIRE(reply.elements.size() == 2u, address(sentinel) << ": " << to_string(reply));
    BOOST_TEST(reply.elements[0].str == "127.0.0.1");
    return static_cast<unsigned short>(std::stoul(reply.elements[1].str));
}

// The value of `field` in one entry of SENTINEL MASTER / REPLICAS / SENTINELS (name, value, ...).
std::string sentinel_field(const redlock::resp::value& entry, std::string_view field) {
    for (std::size_t i = 0; i + 1 < entry.elements.size(); i += 2) {
        if (entry.elements[i].str == field) return entry.elements[i + 1].str;
    }
    return {};
}

std::string read_text(const std::string& path) {
    std::ifstream in(path);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
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

BOOST_AUTO_TEST_CASE(test_cluster_of_three_masters_with_one_replica_each_comes_up) {
    const auto t0 = steady::now();
    redis_cluster c;
    BOOST_TEST_MESSAGE("3 masters + 3 replicas ready in " << elapsed_ms(t0) << " ms");
    BOOST_REQUIRE(c.size() == 6u);

    std::set<unsigned short> ports;
    for (std::size_t i = 0; i < c.size(); ++i) {
        auto& s = c.server(i);
        BOOST_TEST(s.running());
        ports.insert(s.port());
        const auto info = s.command({"CLUSTER", "INFO"});
        BOOST_TEST(info_field(info, "cluster_state") == "ok");
        BOOST_TEST(info_field(info, "cluster_slots_assigned") == "16384");
        BOOST_TEST(info_field(info, "cluster_known_nodes") == "6");
        BOOST_TEST(info_field(info, "cluster_size") == "3");
    }
    BOOST_TEST(ports.size() == 6u);
    BOOST_TEST(c.uri() == "redis-cluster://" + c.seeds());
    const auto seeds = c.seeds();
    BOOST_TEST(std::count(seeds.begin(), seeds.end(), ',') == 5);
    BOOST_TEST(seeds.starts_with(address(c.server(0)) + ","));

    const auto masters = c.masters();
    BOOST_REQUIRE(masters.size() == 3u);
    std::set<unsigned short> master_ports;
    for (auto* m : masters) {
        master_ports.insert(m->port());
        BOOST_TEST(role(*m) == "master");
        BOOST_TEST(info_field(m->command({"INFO", "replication"}), "connected_slaves") == "1");
        BOOST_TEST(c.node_id(*m).size() == 40u);
    }

    // CLUSTER SLOTS: the 3 masters own all 16384 slots between them.
    std::map<unsigned short, std::int64_t> owned;
    const auto slots = c.server(0).command({"CLUSTER", "SLOTS"});
    for (const auto& range : slots.elements) {
        BOOST_REQUIRE(range.elements.size() >= 3u);  // first, last, master, replicas...
        const auto master_port = static_cast<unsigned short>(range.elements[2].elements[1].integer);
        BOOST_TEST(master_ports.contains(master_port));
        owned[master_port] += range.elements[1].integer - range.elements[0].integer + 1;
    }
    // The 3 others replicate one master each, linked. (Their ROLE, not CLUSTER SLOTS: Redis 7
    // lists a replica there only once the gossip says its replication offset is not 0.)
    std::map<unsigned short, int> replicas_of;
    for (std::size_t i = 0; i < c.size(); ++i) {
        auto& s = c.server(i);
        if (master_ports.contains(s.port())) continue;
        const auto r = s.command({"ROLE"});
        BOOST_REQUIRE(r.elements.size() >= 4u);
        BOOST_TEST(r.elements[0].str == "slave");
        BOOST_TEST(r.elements[3].str == "connected");
        ++replicas_of[static_cast<unsigned short>(r.elements[2].integer)];
        BOOST_TEST(info_field(s.command({"INFO", "replication"}), "master_link_status") == "up");
    }
    BOOST_TEST(replicas_of.size() == 3u);
    for (const auto& [port, n] : replicas_of) {
        BOOST_TEST(master_ports.contains(port));
        BOOST_TEST(n == 1);
    }
    // And every node knows it: 3 masters and 3 replicas in each one's CLUSTER NODES.
    for (std::size_t i = 0; i < c.size(); ++i) {
        const auto nodes = c.server(i).command({"CLUSTER", "NODES"}).str;
        BOOST_TEST(nodes_with_flag(nodes, "master") == 3, nodes);
        BOOST_TEST(nodes_with_flag(nodes, "slave") == 3, nodes);
    }
    BOOST_TEST(owned.size() == 3u);
    std::int64_t total = 0;
    for (const auto& [port, n] : owned) {
        BOOST_TEST(n > 5000);  // an even split: 5461 or 5462 each
        total += n;
    }
    BOOST_TEST(total == 16384);
}

BOOST_AUTO_TEST_CASE(test_cluster_master_of_slot_agrees_with_keyslot) {
    redis_cluster_options opts;
    opts.replicas_per_master = 0;
    redis_cluster c(opts);
    const auto masters = c.masters();
    BOOST_REQUIRE(masters.size() == 3u);
    std::set<redis_server*> seen;
    for (int i = 0; i < 30; ++i) {
        const std::string key = "key:" + std::to_string(i);
        const auto slot = key_slot_of(c.server(0), key);
        auto& owner = c.master_of_slot(slot);
        seen.insert(&owner);
        // The owner takes the key; every other master redirects to it.
        check_simple(owner.command({"SET", key, "v"}), "OK");
        for (auto* m : masters) {
            if (m == &owner) continue;
            BOOST_TEST(redirection(*m, key) == "MOVED " + std::to_string(slot) + " " + address(owner));
        }
    }
    BOOST_TEST(seen.size() == 3u);  // 30 keys land on every master
    BOOST_TEST(&c.master_of_slot(0) != &c.master_of_slot(16383));
}

BOOST_AUTO_TEST_CASE(test_cluster_move_slot_moves_a_key_and_the_old_master_answers_moved) {
    redis_cluster_options opts;
    opts.replicas_per_master = 0;
    redis_cluster c(opts);
    const std::string key = "{moved}:k";
    const auto slot = key_slot_of(c.server(0), key);
    auto& from = c.master_of_slot(slot);
    check_simple(from.command({"SET", key, "payload"}), "OK");
    check_simple(from.command({"SET", "{moved}:other", "2"}), "OK");
    redis_server* to = nullptr;
    for (auto* m : c.masters()) {
        if (m != &from) to = m;
    }
    BOOST_REQUIRE(to != nullptr);

    const auto t0 = steady::now();
    c.move_slot(slot, *to);
    BOOST_TEST_MESSAGE("move_slot in " << elapsed_ms(t0) << " ms");

    BOOST_TEST(&c.master_of_slot(slot) == to);
    check_bulk(to->command({"GET", key}), "payload");
    check_bulk(to->command({"GET", "{moved}:other"}), "2");
    BOOST_TEST(redirection(from, key) == "MOVED " + std::to_string(slot) + " " + address(*to));
    BOOST_TEST(from.command({"CLUSTER", "COUNTKEYSINSLOT", std::to_string(slot)}).integer == 0);
    BOOST_CHECK_NO_THROW(c.wait_until_ok(2s));
    // Moving it to where it is, or finishing a migration never begun, is a test bug.
    BOOST_CHECK_THROW(c.move_slot(slot, *to), std::invalid_argument);
    BOOST_CHECK_THROW(c.finish_slot_migration(slot), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(test_cluster_slot_migration_steps_answer_ask_then_moved) {
    redis_cluster_options opts;
    opts.replicas_per_master = 0;
    redis_cluster c(opts);
    const std::string key = "{ask}:k";
    const std::string missing = "{ask}:missing";
    const auto slot = key_slot_of(c.server(0), key);
    const auto s = std::to_string(slot);
    auto& from = c.master_of_slot(slot);
    check_simple(from.command({"SET", key, "v"}), "OK");
    redis_server* to = nullptr;
    for (auto* m : c.masters()) {
        if (m != &from) to = m;
    }
    BOOST_REQUIRE(to != nullptr);

    c.begin_slot_migration(slot, *to);
    BOOST_CHECK_THROW(c.begin_slot_migration(slot, *to), std::invalid_argument);
    // The source still serves the keys it has, and sends the others to the target.
    check_bulk(from.command({"GET", key}), "v");
    BOOST_TEST(redirection(from, missing) == "ASK " + s + " " + address(*to));
    // Without ASKING the target does not serve the importing slot: it sends back to the owner.
    BOOST_TEST(redirection(*to, key) == "MOVED " + s + " " + address(from));

    c.migrate_slot_keys(slot);
    BOOST_TEST(redirection(from, key) == "ASK " + s + " " + address(*to));
    BOOST_TEST(to->command({"CLUSTER", "COUNTKEYSINSLOT", s}).integer == 1);

    c.finish_slot_migration(slot);
    BOOST_TEST(redirection(from, key) == "MOVED " + s + " " + address(*to));
    check_bulk(to->command({"GET", key}), "v");
    c.wait_until_ok();
    BOOST_TEST(&c.master_of_slot(slot) == to);
}

BOOST_AUTO_TEST_CASE(test_cluster_failover_promotes_the_replica) {
    redis_cluster c;
    const std::string key = "{failover}:k";
    const auto slot = key_slot_of(c.server(0), key);
    auto& old_master = c.master_of_slot(slot);
    check_simple(old_master.command({"SET", key, "kept"}), "OK");
    // A manual failover waits until the replica has everything the master acknowledged.
    BOOST_TEST(old_master.command({"WAIT", "1", "2000"}).integer == 1);

    const auto t0 = steady::now();
    auto& promoted = c.failover(old_master);
    BOOST_TEST_MESSAGE("failover in " << elapsed_ms(t0) << " ms");

    BOOST_TEST(&promoted != &old_master);
    BOOST_TEST(role(promoted) == "master");
    BOOST_TEST(role(old_master) == "slave");
    BOOST_TEST(info_field(promoted.command({"CLUSTER", "INFO"}), "cluster_state") == "ok");
    BOOST_TEST(&c.master_of_slot(slot) == &promoted);
    check_bulk(promoted.command({"GET", key}), "kept");
    const auto masters = c.masters();
    BOOST_TEST(masters.size() == 3u);
    BOOST_TEST((std::find(masters.begin(), masters.end(), &promoted) != masters.end()));
    BOOST_TEST((std::find(masters.begin(), masters.end(), &old_master) == masters.end()));
    BOOST_CHECK_NO_THROW(c.wait_until_ok(2s));

    // And back, at once: the other masters must first learn that the old master is now a
    // replica, or they would not vote for it.
    const auto t1 = steady::now();
    auto& back = c.failover(promoted);
    BOOST_TEST_MESSAGE("failover back in " << elapsed_ms(t1) << " ms");
    BOOST_TEST(&back == &old_master);
    BOOST_TEST(role(old_master) == "master");
    BOOST_TEST(&c.master_of_slot(slot) == &old_master);
    check_bulk(old_master.command({"GET", key}), "kept");
}

BOOST_AUTO_TEST_CASE(test_cluster_cut_off_master_is_failed_over_while_it_still_answers_then_turns_replica) {
    redis_cluster_options opts;
    opts.partitionable = true;
    opts.server.extra_args = {"--cluster-node-timeout", "1000"};
    redis_cluster c(opts);
    std::set<std::string> hosts;
    for (std::size_t i = 0; i < c.size(); ++i)
        hosts.insert(c.server(i).host());
    BOOST_TEST(hosts.size() == c.size());
    BOOST_TEST(!hosts.contains("127.0.0.1"));
    // The others know each node by its own address, and its bus by its proxy's port.
    const auto nodes = c.server(0).command({"CLUSTER", "NODES"}).str;
    for (std::size_t i = 0; i < c.size(); ++i) {
        const auto& s = c.server(i);
        BOOST_TEST(nodes.find(s.host() + ":" + std::to_string(s.port()) + "@") != std::string::npos, nodes);
        BOOST_TEST(nodes.find("@" + std::to_string(s.cluster_port())) == std::string::npos, nodes);
    }
    const std::string key = "{cut}:k";
    const auto slot = key_slot_of(c.server(0), key);
    auto& m = c.master_of_slot(slot);
    check_simple(m.command({"SET", key, "before"}), "OK");
    BOOST_TEST(m.command({"WAIT", "1", "2000"}).integer == 1);
    redis_server* r = nullptr;
    for (std::size_t i = 0; i < c.size(); ++i) {
        const auto reply = c.server(i).command({"ROLE"});
        if (reply.elements.size() >= 3 && reply.elements[0].str == "slave" &&
            reply.elements[2].integer == m.port())
            r = &c.server(i);
    }
    BOOST_TEST_REQUIRE(r != nullptr);

    const auto t0 = steady::now();
    c.cut_off(m);
    BOOST_CHECK_THROW(c.cut_off(*r), std::logic_error);  // one at a time
    BOOST_TEST(redlock::test::wait_until([&] {
        return info_field(r->command({"INFO", "replication"}), "master_link_status") == "down";
    }));
    // Cut from the bus, it finds it cannot reach most masters and refuses what clients ask,
    // though they still reach it; the others fail it over.
    BOOST_TEST(redlock::test::wait_until([&] {
        return info_field(m.command({"CLUSTER", "INFO"}), "cluster_state") == "fail";
    }));
    BOOST_TEST_MESSAGE("the cut master refuses " << elapsed_ms(t0) << " ms after the cut");
    BOOST_TEST(m.command({"SET", key, "old side"}).str.starts_with("CLUSTERDOWN"));
    BOOST_TEST(redlock::test::wait_until([&] { return role(*r) == "master"; }));
    BOOST_TEST_MESSAGE("replica promoted " << elapsed_ms(t0) << " ms after the cut");
    BOOST_TEST(role(m) == "master");
    check_simple(r->command({"SET", key, "new side"}), "OK");

    const auto t1 = steady::now();
    c.rejoin(m);
    BOOST_TEST(redlock::test::wait_until([&] { return role(m) == "slave"; }));
    BOOST_CHECK_NO_THROW(c.wait_until_ok(10s));
    BOOST_TEST(redlock::test::wait_until([&] {
        return info_field(m.command({"INFO", "replication"}), "master_link_status") == "up";
    }));
    BOOST_TEST_MESSAGE("old master made a replica " << elapsed_ms(t1) << " ms after it rejoined");
    BOOST_TEST(&c.master_of_slot(slot) == r);
    check_bulk(r->command({"GET", key}), "new side");
    BOOST_TEST(m.command({"GET", key}).str.starts_with("MOVED"));  // a replica of r
}

BOOST_AUTO_TEST_CASE(test_cluster_of_one_master_without_replicas_comes_up) {
    redis_cluster_options opts;
    opts.masters = 1;
    opts.replicas_per_master = 0;
    const auto t0 = steady::now();
    redis_cluster c(opts);
    BOOST_TEST_MESSAGE("1 master ready in " << elapsed_ms(t0) << " ms");
    BOOST_REQUIRE(c.size() == 1u);
    auto& s = c.server(0);
    BOOST_TEST(c.uri() == "redis-cluster://" + address(s));
    BOOST_TEST(&c.master_of_slot(0) == &s);
    BOOST_TEST(&c.master_of_slot(16383) == &s);
    BOOST_TEST(c.masters().size() == 1u);
    const auto info = s.command({"CLUSTER", "INFO"});
    BOOST_TEST(info_field(info, "cluster_state") == "ok");
    BOOST_TEST(info_field(info, "cluster_slots_assigned") == "16384");
    check_simple(s.command({"SET", "a", "1"}), "OK");
    check_simple(s.command({"SET", "b", "2"}), "OK");
}

BOOST_AUTO_TEST_CASE(test_cluster_of_two_masters_is_built_by_hand_with_replicas) {
    redis_cluster_options opts;
    opts.masters = 2;
    opts.replicas_per_master = 1;
    const auto t0 = steady::now();
    redis_cluster c(opts);
    BOOST_TEST_MESSAGE("2 masters + 2 replicas ready in " << elapsed_ms(t0) << " ms");
    BOOST_REQUIRE(c.size() == 4u);
    const auto masters = c.masters();
    BOOST_REQUIRE(masters.size() == 2u);
    BOOST_TEST(masters[0] == &c.server(0));
    BOOST_TEST(masters[1] == &c.server(1));
    BOOST_TEST(&c.master_of_slot(0) == &c.server(0));
    BOOST_TEST(&c.master_of_slot(8191) == &c.server(0));
    BOOST_TEST(&c.master_of_slot(8192) == &c.server(1));
    BOOST_TEST(&c.master_of_slot(16383) == &c.server(1));
    for (std::size_t i = 2; i < 4; ++i) {
        const auto r = c.server(i).command({"ROLE"});
        BOOST_REQUIRE(r.elements.size() >= 4u);
        BOOST_TEST(r.elements[0].str == "slave");
        BOOST_TEST(r.elements[2].integer == c.server(i - 2).port());
        BOOST_TEST(info_field(c.server(i).command({"INFO", "replication"}), "master_link_status") == "up");
    }
}

BOOST_AUTO_TEST_CASE(test_cluster_constructor_failure_stops_every_server) {
    const auto before = child_pids();
    const char* saved = std::getenv("REDLOCK_TEST_REDIS_CLI");
    const std::string saved_value = saved != nullptr ? saved : "";
    ::setenv("REDLOCK_TEST_REDIS_CLI", "/nonexistent/redis-cli", 1);
    redis_cluster_options opts;
    opts.replicas_per_master = 0;
    BOOST_CHECK_EXCEPTION(redis_cluster{opts}, std::runtime_error, [](const std::runtime_error& e) {
        const std::string what = e.what();
        return what.find("/nonexistent/redis-cli --cluster create") != std::string::npos &&
               what.find("exited with status 127") != std::string::npos;
    });
    if (saved != nullptr) {
        ::setenv("REDLOCK_TEST_REDIS_CLI", saved_value.c_str(), 1);
    } else {
        ::unsetenv("REDLOCK_TEST_REDIS_CLI");
    }
    BOOST_TEST(child_pids() == before, "servers or redis-cli left running");
}

BOOST_AUTO_TEST_CASE(test_sentinel_group_forms_around_the_first_server) {
    const auto t0 = steady::now();
    redis_sentinel_group g;
    BOOST_TEST_MESSAGE("master + 2 replicas + 3 sentinels ready in " << elapsed_ms(t0) << " ms");
    BOOST_REQUIRE(g.data_servers() == 3u);
    BOOST_REQUIRE(g.sentinels() == 3u);
    auto& m = g.data_server(0);
    BOOST_TEST(&g.master() == &m);
    BOOST_TEST(role(m) == "master");
    BOOST_TEST(info_field(m.command({"INFO", "replication"}), "connected_slaves") == "2");
    BOOST_TEST(g.sentinel_addresses() ==
               address(g.sentinel(0)) + "," + address(g.sentinel(1)) + "," + address(g.sentinel(2)));
    BOOST_TEST(g.uri() == "redis-sentinel://" + g.sentinel_addresses() + "#mymaster");

    for (std::size_t i = 1; i < 3; ++i) {
        auto& r = g.data_server(i);
        const auto reply = r.command({"ROLE"});
        BOOST_REQUIRE(reply.elements.size() >= 4u);
        BOOST_TEST(reply.elements[0].str == "slave");
        BOOST_TEST(reply.elements[2].integer == m.port());
        BOOST_TEST(reply.elements[3].str == "connected");
        BOOST_TEST(info_field(r.command({"INFO", "replication"}), "master_link_status") == "up");
    }
    for (std::size_t i = 0; i < 3; ++i) {
        auto& s = g.sentinel(i);
        BOOST_TEST(info_field(s.command({"INFO", "server"}), "redis_mode") == "sentinel");
        BOOST_TEST(named_master_port(s, "mymaster") == m.port());
        const auto master = s.command({"SENTINEL", "MASTER", "mymaster"});
        BOOST_TEST(sentinel_field(master, "flags") == "master");
        BOOST_TEST(sentinel_field(master, "num-slaves") == "2");
        BOOST_TEST(sentinel_field(master, "num-other-sentinels") == "2");
        BOOST_TEST(sentinel_field(master, "quorum") == "2");
        BOOST_TEST(sentinel_field(master, "down-after-milliseconds") == "2000");
        BOOST_TEST(s.command({"SENTINEL", "REPLICAS", "mymaster"}).elements.size() == 2u);
        BOOST_TEST(s.command({"SENTINEL", "SENTINELS", "mymaster"}).elements.size() == 2u);
        BOOST_TEST(s.command({"SENTINEL", "CKQUORUM", "mymaster"}).str.starts_with("OK"));
        // Sentinel has rewritten its config file with what it learnt, in its own temp dir.
        const auto conf = read_text(s.sentinel_config_file());
        BOOST_TEST(s.sentinel_config_file().starts_with(s.dir()));
        BOOST_TEST(conf.find("sentinel monitor mymaster 127.0.0.1 " + std::to_string(m.port()) + " 2") !=
                       std::string::npos,
                   conf);
        BOOST_TEST(conf.find("sentinel known-replica mymaster 127.0.0.1 " +
                             std::to_string(g.data_server(1).port())) != std::string::npos,
                   conf);
    }
    // The replicas get what the master takes.
    check_simple(m.command({"SET", "k", "v"}), "OK");
    BOOST_TEST(m.command({"WAIT", "2", "2000"}).integer == 2);
    check_bulk(g.data_server(1).command({"GET", "k"}), "v");
    check_bulk(g.data_server(2).command({"GET", "k"}), "v");
    BOOST_CHECK_NO_THROW(g.wait_until_stable(1s));

    // A restarted sentinel reads back the config file it rewrote: it knows the others at once.
    auto& s = g.sentinel(2);
    s.restart();
    BOOST_TEST(named_master_port(s, "mymaster") == m.port());
    BOOST_TEST(s.command({"SENTINEL", "SENTINELS", "mymaster"}).elements.size() == 2u);
    BOOST_TEST(s.command({"SENTINEL", "REPLICAS", "mymaster"}).elements.size() == 2u);
    BOOST_CHECK_NO_THROW(g.wait_until_stable(5s));
    BOOST_TEST(&g.master() == &m);
}

BOOST_AUTO_TEST_CASE(test_sentinel_group_refuses_impossible_options) {
    const auto before = child_pids();
    const auto refused = [](redis_sentinel_options o) {
        BOOST_CHECK_THROW(redis_sentinel_group{o}, std::invalid_argument);
    };
    redis_sentinel_options o;
    o.sentinels = 0;
    refused(o);
    o = {};
    o.quorum = 0;
    refused(o);
    o = {};
    o.quorum = 4;
    refused(o);
    o = {};
    o.master_name = "my master";
    refused(o);
    o = {};
    o.own_users = true;  // without a --requirepass
    refused(o);
    BOOST_TEST(child_pids() == before, "servers left running");
}

BOOST_AUTO_TEST_CASE(test_sentinel_kill_master_promotes_a_replica) {
    redis_sentinel_group g;
    auto& old = g.data_server(0);
    const auto old_port = old.port();
    check_simple(old.command({"SET", "k", "kept"}), "OK");
    BOOST_TEST(old.command({"WAIT", "2", "2000"}).integer == 2);

    const auto t0 = steady::now();
    auto& promoted = g.kill_master_and_wait_for_failover();
    BOOST_TEST_MESSAGE("failover after SIGKILL in " << elapsed_ms(t0) << " ms");

    BOOST_TEST(!old.running());
    BOOST_TEST(&promoted != &old);
    BOOST_TEST((&promoted == &g.data_server(1) || &promoted == &g.data_server(2)));
    BOOST_TEST(role(promoted) == "master");
    check_bulk(promoted.command({"GET", "k"}), "kept");
    check_simple(promoted.command({"SET", "after", "failover"}), "OK");
    // The other replica has been moved over to the new master.
    auto& other = &promoted == &g.data_server(1) ? g.data_server(2) : g.data_server(1);
    const auto other_role = other.command({"ROLE"});
    BOOST_REQUIRE(other_role.elements.size() >= 4u);
    BOOST_TEST(other_role.elements[0].str == "slave");
    BOOST_TEST(other_role.elements[2].integer == promoted.port());
    BOOST_TEST(promoted.command({"WAIT", "1", "2000"}).integer == 1);
    check_bulk(other.command({"GET", "after"}), "failover");

    const auto t1 = steady::now();
    g.wait_until_stable();
    BOOST_TEST_MESSAGE("every sentinel agreed " << elapsed_ms(t1) << " ms later");
    BOOST_TEST(&g.master() == &promoted);
    for (std::size_t i = 0; i < g.sentinels(); ++i) {
        BOOST_TEST(named_master_port(g.sentinel(i), "mymaster") == promoted.port());
        // What a client subscribed to the sentinel's +switch-master channel got (the log has
        // the same text).
        const auto log = read_text(g.sentinel(i).dir() + "/redis.log");
        const auto line = "+switch-master mymaster 127.0.0.1 " + std::to_string(old_port) + " 127.0.0.1 " +
                          std::to_string(promoted.port());
        BOOST_TEST(log.find(line) != std::string::npos, "sentinel " << i << " logged no " << line);
    }
}

BOOST_AUTO_TEST_CASE(test_sentinel_forced_failover_demotes_the_old_master_later) {
    redis_sentinel_options opts;
    opts.replicas = 1;
    redis_sentinel_group g(opts);
    auto& old = g.data_server(0);

    const auto t0 = steady::now();
    auto& promoted = g.failover();
    BOOST_TEST_MESSAGE("SENTINEL FAILOVER in " << elapsed_ms(t0) << " ms");
    BOOST_TEST(&promoted == &g.data_server(1));
    BOOST_TEST(role(promoted) == "master");
    BOOST_TEST(old.running());
    check_simple(promoted.command({"SET", "k", "v"}), "OK");

    // The sentinels turn the old master, still running, into a replica of the new one.
    const auto t1 = steady::now();
    g.wait_until_replicas_linked();
    BOOST_TEST_MESSAGE("old master converted to a replica " << elapsed_ms(t1) << " ms later");
    BOOST_TEST(role(old) == "slave");
    BOOST_TEST(promoted.command({"WAIT", "1", "2000"}).integer == 1);
    check_bulk(old.command({"GET", "k"}), "v");
    BOOST_TEST(&g.master() == &promoted);
}

BOOST_AUTO_TEST_CASE(test_sentinel_group_with_requirepass_forms_and_fails_over) {
    redis_sentinel_options opts;
    opts.replicas = 1;
    opts.server.extra_args = {"--requirepass", "s3cret"};
    redis_sentinel_group g(opts);
    BOOST_TEST(g.uri() == "redis-sentinel://:s3cret@" + g.sentinel_addresses() + "#mymaster");
    auto& m = g.data_server(0);
    auto& r = g.data_server(1);
    BOOST_TEST(&g.master() == &m);
    // The replica logged in to the master, and so did the sentinels, which have no password.
    BOOST_TEST(info_field(r.command({"INFO", "replication"}), "master_link_status") == "up");
    const auto masterauth = r.command({"CONFIG", "GET", "masterauth"});
    BOOST_REQUIRE(masterauth.elements.size() == 2u);
    BOOST_TEST(masterauth.elements[1].str == "s3cret");
    for (std::size_t i = 0; i < g.sentinels(); ++i) {
        const auto master = g.sentinel(i).command({"SENTINEL", "MASTER", "mymaster"});
        BOOST_TEST(sentinel_field(master, "flags") == "master");
        BOOST_TEST(sentinel_field(master, "num-slaves") == "1");
    }

    auto& promoted = g.kill_master_and_wait_for_failover();
    BOOST_TEST(&promoted == &r);
    BOOST_TEST(role(r) == "master");
    check_simple(r.command({"SET", "k", "v"}), "OK");
    g.wait_until_stable();
    for (std::size_t i = 0; i < g.sentinels(); ++i)
        BOOST_TEST(named_master_port(g.sentinel(i), "mymaster") == r.port());
}

// A split brain: the master cut from its replica and the sentinels goes on answering its own
// clients as a master while the sentinels promote the replica; joined again, it is made a
// replica of the new master.
BOOST_AUTO_TEST_CASE(test_sentinel_cut_off_master_is_failed_over_while_its_clients_still_write) {
    redis_sentinel_options opts;
    opts.replicas = 1;
    opts.own_users = true;
    opts.server.extra_args = {"--requirepass", "s3cret"};
    redis_sentinel_group g(opts);
    auto& m = g.data_server(0);
    auto& r = g.data_server(1);
    const auto masteruser = r.command({"CONFIG", "GET", "masteruser"});
    BOOST_REQUIRE(masteruser.elements.size() == 2u);
    BOOST_TEST(masteruser.elements[1].str == redis_sentinel_group::replication_user);

    const auto t0 = steady::now();
    g.cut_off(0);
    BOOST_TEST(redlock::test::wait_until([&] {
        return info_field(r.command({"INFO", "replication"}), "master_link_status") == "down";
    }));
    auto& promoted = g.wait_for_failover(m, false);
    BOOST_TEST_MESSAGE("replica promoted " << elapsed_ms(t0) << " ms after the cut");
    BOOST_TEST(&promoted == &r);
    // Two masters: the old one still writes for the clients that reach it.
    BOOST_TEST(role(m) == "master");
    check_simple(m.command({"SET", "k", "on the old side"}), "OK");
    check_simple(r.command({"SET", "k", "on the new side"}), "OK");

    const auto t1 = steady::now();
    g.rejoin(0);
    g.wait_until_replicas_linked();
    BOOST_TEST_MESSAGE("old master made a replica " << elapsed_ms(t1) << " ms after it rejoined");
    BOOST_TEST(role(m) == "slave");
    check_bulk(m.command({"GET", "k"}), "on the new side");
}

BOOST_AUTO_TEST_SUITE_END()
