// SPDX-License-Identifier: BSL-1.0
// The redlock command (tools/) against real servers: `redlock run` keeps its commands' critical
// sections apart, stops a command whose lease was lost, and exits as documented; `redlock
// check` reports deliberately unsafe set-ups.
#include "redis/cluster_slot.hpp"
#include "support/child_process.hpp"
#include "support/lock_helpers.hpp"
#include "support/redis_cluster.hpp"
#include "support/redis_sentinel.hpp"
#include "support/redis_server.hpp"
#include "support/scratch_dir.hpp"
#include "support/tcp_proxy.hpp"
#include "support/wait_until.hpp"
#include <redlock/inspection.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/test/unit_test.hpp>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

using namespace std::chrono_literals;
using redlock::test::key_tag;
using redlock::test::lock_key;
using redlock::test::node_uris;
using redlock::test::read_file;
using redlock::test::redis_server;
using redlock::test::scratch_dir;
using redlock::test::server_list;
using redlock::test::spawn_shell;
using redlock::test::start_redis_servers;
using redlock::test::wait_child;
using redlock::test::wait_until;
using redlock::test::write_config_file;

namespace {

const std::string redlock_path = REDLOCK_COMMAND_PATH;

// Starts `redlock ARGS` (quoted as in a shell), its output in `out`.
pid_t start_redlock(const std::string& args, const std::string& out) {
    return spawn_shell(redlock_path + " " + args, out);
}

int run_redlock(const std::string& args, const std::string& out) {
    return wait_child(start_redlock(args, out), 60s);
}

bool key_anywhere(const server_list& servers, const std::string& resource) {
    for (const auto& s : servers)
        if (redlock::test::key_exists(*s, resource)) return true;
    return false;
}

// Granted on every node: no SET of the holder's round is still on its way, to split the nodes
// with a contender's round or to put a key back after a test deleted it.
bool key_everywhere(const server_list& servers, const std::string& resource) {
    for (const auto& s : servers)
        if (!redlock::test::key_exists(*s, resource)) return false;
    return true;
}

bool accepts_connections(unsigned short port) {
    boost::asio::io_context ioc;
    boost::asio::ip::tcp::socket socket(ioc);
    boost::system::error_code ec;
    socket.connect({boost::asio::ip::make_address("127.0.0.1"), port}, ec);
    return !ec;
}

// `redlock RUN --ttl 10s RESOURCE -- sleep HOLD` and, once `held()` sees its key, a waiter for
// RESOURCE on a terminal (a pseudo-terminal from script(1)): what the waiter's terminal showed.
std::string waiter_screen(const scratch_dir& dir, const std::string& run, const std::string& resource,
                          const std::string& hold, const std::function<bool()>& held) {
    auto holder = start_redlock(run + " --ttl 10s " + resource + " -- sleep " + hold, dir.file("holder"));
    BOOST_TEST_REQUIRE(wait_until(held), read_file(dir.file("holder")));
    const auto typescript = dir.file("typescript");
    auto waiter = spawn_shell(
        "script -qec '" + redlock_path + " " + run + " --wait 20s " + resource + " -- true' " + typescript,
        "/dev/null");
    BOOST_TEST(wait_child(waiter, 30s) == 0, read_file(typescript));
    BOOST_TEST(wait_child(holder, 20s) == 0, read_file(dir.file("holder")));
    return read_file(typescript);
}

// Three servers, a scratch dir, and `redlock run` pointed at the servers.
struct three_servers {
    server_list servers = start_redis_servers(3);
    scratch_dir dir;
    std::string nodes = "--nodes " + node_uris(servers) + " --restart-quarantine off";
    std::string run = "run " + nodes;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(redlock_command_test)

namespace {

// Runs 20 invocations at once, each appending "start PID" and "end PID" around a 50 ms sleep,
// on `resource` (or each on its own resource with `resource` "own"); returns the overlaps.
struct marks_summary {
    int pairs = 0;
    int overlaps = 0;
};

marks_summary twenty_runs(const scratch_dir& dir, const std::string& config, const std::string& resource) {
    const auto marks = dir.file("marks-" + resource);
    std::vector<pid_t> runs;
    for (int i = 0; i < 20; ++i) {
        const auto r = resource == "own" ? "own" + std::to_string(i) : resource;
        runs.push_back(start_redlock("run --config " + config + " --wait 60s --ttl 2s " + r +
                                         " -- /bin/sh -c 'echo start $$ >> " + marks +
                                         "; sleep 0.05; echo end $$ >> " + marks + "'",
                                     dir.file("out" + std::to_string(i))));
    }
    for (std::size_t i = 0; i < runs.size(); ++i)
        BOOST_TEST(wait_child(runs[i], 90s) == 0, read_file(dir.file("out" + std::to_string(i))));
    std::istringstream in(read_file(marks));
    std::string word, pid;
    int open = 0;
    marks_summary m;
    while (in >> word >> pid) {
        if (word == "start") {
            if (open > 0) ++m.overlaps;
            ++open;
        } else {
            --open;
            ++m.pairs;
        }
    }
    return m;
}

}  // namespace

// 20 invocations at once on one resource over 5 servers: the critical sections never overlap.
// The control, each on a resource of its own, shows that the marks do reveal overlaps.
BOOST_AUTO_TEST_CASE(twenty_concurrent_runs_never_overlap) {
    auto servers = start_redis_servers(5);
    scratch_dir dir;
    const auto config = write_config_file(dir, servers, "config");
    const auto shared = twenty_runs(dir, config, "shared");
    BOOST_TEST(shared.pairs == 20);
    BOOST_TEST(shared.overlaps == 0);
    BOOST_TEST(wait_until([&] { return !key_anywhere(servers, "shared"); }));
    const auto control = twenty_runs(dir, config, "own");
    BOOST_TEST(control.pairs == 20);
    BOOST_TEST(control.overlaps > 0);
}

namespace {

// Ten invocations at once, each on two of four resources r0..r3 in a ring (run i takes r(i mod
// 4) and r(i+1 mod 4), the odd ones naming them in the opposite order), appending "start PID
// A B" and "end PID A B" around a 200 ms sleep. `locked`: both resources at once; else (the
// control) each run locks a resource of its own. Returns per resource the overlaps seen.
marks_summary ten_pair_runs(const scratch_dir& dir, const std::string& config, bool locked) {
    const auto marks = dir.file(locked ? "pair-marks" : "pair-marks-control");
    std::vector<pid_t> runs;
    for (int i = 0; i < 10; ++i) {
        auto a = "r" + std::to_string(i % 4);
        auto b = "r" + std::to_string((i + 1) % 4);
        if (i % 2 == 1) std::swap(a, b);
        const auto names = a + " " + b;
        const auto lock = locked ? names : "own" + std::to_string(i);
        runs.push_back(start_redlock("run --config " + config + " --wait 60s --ttl 2s " + lock +
                                         " -- /bin/sh -c 'echo start $$ " + names + " >> " + marks +
                                         "; sleep 0.2; echo end $$ " + names + " >> " + marks + "'",
                                     dir.file("pair-out" + std::to_string(i))));
    }
    for (std::size_t i = 0; i < runs.size(); ++i)
        BOOST_TEST(wait_child(runs[i], 90s) == 0, read_file(dir.file("pair-out" + std::to_string(i))));
    std::istringstream in(read_file(marks));
    std::string word, pid, a, b;
    std::map<std::string, int> open;
    marks_summary m;
    while (in >> word >> pid >> a >> b) {
        for (const auto& r : {a, b}) {
            if (word == "start") {
                if (open[r] > 0) ++m.overlaps;
                ++open[r];
            } else {
                --open[r];
            }
        }
        if (word == "end") ++m.pairs;
    }
    return m;
}

}  // namespace

// Issue 21: runs that take overlapping pairs of resources, named in opposite orders, all get
// their turn (none deadlocks: every run exits 0 well within its wait) and never overlap on a
// resource; the control, which locks something else, shows that the marks reveal overlaps.
BOOST_AUTO_TEST_CASE(ten_runs_on_overlapping_pairs_in_opposite_orders_never_deadlock_or_overlap) {
    auto servers = start_redis_servers(5);
    scratch_dir dir;
    const auto config = write_config_file(dir, servers, "config");
    const auto locked = ten_pair_runs(dir, config, true);
    BOOST_TEST(locked.pairs == 10);
    BOOST_TEST(locked.overlaps == 0);
    for (int r = 0; r < 4; ++r)
        BOOST_TEST(wait_until([&] { return !key_anywhere(servers, "r" + std::to_string(r)); }));
    const auto control = ten_pair_runs(dir, config, false);
    BOOST_TEST(control.pairs == 10);
    BOOST_TEST(control.overlaps > 0);
}

BOOST_FIXTURE_TEST_CASE(the_command_gets_the_lease_in_its_environment_and_its_status_is_ours, three_servers) {
    const auto env = dir.file("env");
    const auto out = dir.file("out");
    BOOST_TEST(
        run_redlock(run + " --fenced --label 'nightly report' job -- /bin/sh -c 'echo $REDLOCK_RESOURCE " +
                        "$REDLOCK_TOKEN $REDLOCK_FENCE $PPID > " + env + "; exit 3'",
                    out) == 3,
        read_file(out));
    std::istringstream in(read_file(env));
    std::string resource, token;
    unsigned long long fence = 0;
    std::int64_t redlock_pid = 0;
    in >> resource >> token >> fence >> redlock_pid;
    BOOST_TEST(resource == "job");
    // Its token tells who holds: the redlock process (the command's parent) and its label.
    const auto who = redlock::identity_of(token);
    BOOST_TEST_REQUIRE(who.has_value(), token);
    BOOST_TEST(who->pid == redlock_pid);
    BOOST_TEST(who->label == "nightly report");
    BOOST_TEST(fence >= 1u);
    BOOST_TEST(wait_until([&] { return !key_anywhere(servers, "job"); }));  // released when it exited

    // Several resources, fenced: a fence each, in the sorted names' order.
    BOOST_TEST(
        run_redlock(run + " --fenced other job -- /bin/sh -c 'echo $REDLOCK_FENCES > " + env + "'", out) == 0,
        read_file(out));
    std::istringstream fences(read_file(env));
    unsigned long long job_fence = 0, other_fence = 0;
    fences >> job_fence >> other_fence;
    BOOST_TEST(job_fence > fence);
    BOOST_TEST(other_fence >= 1u);
    BOOST_TEST(wait_until([&] { return !key_anywhere(servers, "job") && !key_anywhere(servers, "other"); }));

    // A signal that ends the command: 128 + its number.
    BOOST_TEST(run_redlock(run + " job -- /bin/sh -c 'kill -KILL $$'", out) == 128 + SIGKILL);
    // A command that cannot start: 127, and the lock is released.
    BOOST_TEST(run_redlock(run + " job -- /nonexistent/command", out) == 127);
    BOOST_TEST(read_file(out).find("cannot run /nonexistent/command") != std::string::npos, read_file(out));
    BOOST_TEST(wait_until([&] { return !key_anywhere(servers, "job"); }));
}

// --replicas K: the grant counts only once K replicas have it (WAIT). One master with one
// replica: K = 1 runs the command; K = 2 is refused (exit 75) and leaves no key.
BOOST_AUTO_TEST_CASE(run_waits_for_replicas) {
    auto servers = start_redis_servers(1);
    auto& master = *servers[0];
    redlock::test::redis_server_options as_replica;
    as_replica.extra_args = {"--replicaof", "127.0.0.1", std::to_string(master.port())};
    redis_server replica(as_replica);
    BOOST_TEST_REQUIRE(wait_until([&] {
        return master.command({"INFO", "replication"}).str.find("state=online") != std::string::npos;
    }));
    scratch_dir dir;
    const auto out = dir.file("out");
    const auto run = "run --nodes " + master.uri() + " --restart-quarantine off";
    BOOST_TEST(run_redlock(run + " --replicas 1 job -- true", out) == 0, read_file(out));
    // Refused: not_replicated, or a timeout when Redis answers the WAIT after the default 50 ms
    // node timeout plus replica_timeout (it checks a WAIT's timeout on its 100 ms timer).
    BOOST_TEST(run_redlock(run + " --replicas 2 --wait 0 job -- true", out) == 75, read_file(out));
    BOOST_TEST(read_file(out).find("not acquired") != std::string::npos, read_file(out));
    BOOST_TEST(wait_until([&] { return master.command({"EXISTS", lock_key("job")}).integer == 0; }));
}

// A wrong password is refused at once with exit 78, not waited out as a lock held elsewhere
// (75): with a 60 s wait, half of it would be a wait that went on.
BOOST_FIXTURE_TEST_CASE(a_refusal_that_stays_is_78_at_once, three_servers) {
    const auto out = dir.file("out");
    auto uris = node_uris(servers);
    for (auto at = uris.find("redis://"); at != std::string::npos; at = uris.find("redis://", at + 1))
        uris.insert(at + std::string("redis://").size(), "nobody:wrong@");
    const auto t0 = std::chrono::steady_clock::now();
    BOOST_TEST(
        run_redlock("run --nodes " + uris + " --restart-quarantine off --wait 60s job -- true", out) == 78,
        read_file(out));
    BOOST_TEST((std::chrono::steady_clock::now() - t0 < 30s));
    BOOST_TEST(read_file(out).find("auth_failed") != std::string::npos, read_file(out));
    BOOST_TEST(read_file(out).find("WRONGPASS") != std::string::npos, read_file(out));
    BOOST_TEST(run_redlock("run --help", out) == 0);
    BOOST_TEST(read_file(out).find("78 if the servers refused") != std::string::npos, read_file(out));
}

BOOST_FIXTURE_TEST_CASE(not_acquired_within_the_wait_is_75_and_usage_errors_are_2, three_servers) {
    const auto out = dir.file("out");
    auto holder = start_redlock(run + " busy -- sleep 3", dir.file("holder"));
    BOOST_TEST_REQUIRE(wait_until([&] { return key_everywhere(servers, "busy"); }));
    const auto t0 = std::chrono::steady_clock::now();
    BOOST_TEST(run_redlock(run + " --wait 300ms busy -- true", out) == 75);
    BOOST_TEST(read_file(out).find("wait_timeout") != std::string::npos, read_file(out));
    BOOST_TEST(run_redlock(run + " --wait 0 busy -- true", out) == 75);
    BOOST_TEST(read_file(out).find("not_acquired") != std::string::npos, read_file(out));
    BOOST_TEST((std::chrono::steady_clock::now() - t0 < 2500ms));
    BOOST_TEST(wait_child(holder, 20s) == 0);

    struct usage_case {
        std::string args;
        std::string message;
    };
    for (const auto& c : std::vector<usage_case>{
             {nodes + " --ttl 10x r -- true", "--ttl: \"10x\" is not a duration"},
             {nodes + " r true", "expected -- and a command"},
             {nodes + " r --", "no command after --"},
             {nodes + " --shared r s -- true", "several RESOURCEs: not with --shared"},
             {nodes + " --bogus r -- true", "unknown option --bogus"},
             {"r -- true", "no nodes"},
             {"--nodes http://x r -- true", "--nodes:"},
             {nodes + " --ttl 2h r -- true", "invalid_ttl"},
         }) {
        BOOST_TEST(run_redlock("run " + c.args, out) == 2, c.args);
        BOOST_TEST(read_file(out).find(c.message) != std::string::npos, c.args << " -> " << read_file(out));
    }
    BOOST_TEST(run_redlock("frobnicate", out) == 2);
    BOOST_TEST(read_file(out).find("unknown command \"frobnicate\"") != std::string::npos, read_file(out));
    BOOST_TEST(run_redlock("run --help", out) == 0);
    BOOST_TEST(read_file(out).find("exit status") != std::string::npos);
}

// Durations as an operator writes them: in parts ("1m30s", not only "90s") and with a fraction
// ("1.5s"). A ttl above client_config::max_ttl (60 s) is refused with the ttl as read.
BOOST_FIXTURE_TEST_CASE(durations_come_in_parts_and_with_fractions, three_servers) {
    const auto out = dir.file("out");
    BOOST_TEST(run_redlock(run + " --ttl 1m30s r -- true", out) == 2, read_file(out));
    BOOST_TEST(read_file(out).find("ttl 90000 ms is not in") != std::string::npos, read_file(out));
    BOOST_TEST(run_redlock(run + " --ttl 1m0.5s r -- true", out) == 2, read_file(out));
    BOOST_TEST(read_file(out).find("ttl 60500 ms is not in") != std::string::npos, read_file(out));
    BOOST_TEST(run_redlock(run + " --wait 1.0005s r -- true", out) == 2, read_file(out));
    BOOST_TEST(read_file(out).find("--wait: \"1.0005s\" is not a duration") != std::string::npos,
               read_file(out));

    auto holder = start_redlock(run + " --ttl 0.5m parts -- sleep 60", dir.file("holder"));
    BOOST_TEST_REQUIRE(wait_until([&] { return key_everywhere(servers, "parts"); }),
                       read_file(dir.file("holder")));
    for (const std::string wait : {"1.5s", "1s500ms"}) {
        const auto t0 = std::chrono::steady_clock::now();
        BOOST_TEST(run_redlock(run + " --wait " + wait + " parts -- true", out) == 75, read_file(out));
        const auto waited = std::chrono::steady_clock::now() - t0;
        BOOST_TEST(read_file(out).find("wait_timeout") != std::string::npos, read_file(out));
        BOOST_TEST((waited >= 1500ms), wait);  // a part or a fraction dropped gives up after 1 s
        BOOST_TEST((waited < 15s), wait);
    }
    ::kill(holder, SIGINT);
    BOOST_TEST(wait_child(holder, 20s) == 130, read_file(dir.file("holder")));
    BOOST_TEST(!key_anywhere(servers, "parts"));
}

// The nodes from the environment (REDLOCK_NODES, REDLOCK_CONFIG), for every command, a flag
// winning over both; and --conflict-exit-code, which tells a wait that ran out from a CMD that
// exits with 75 itself.
BOOST_FIXTURE_TEST_CASE(nodes_from_the_environment_and_a_status_of_ones_own_for_a_conflict, three_servers) {
    const auto out = dir.file("out");
    const auto with_env = [&](const std::string& env, const std::string& args) {
        return wait_child(spawn_shell("env " + env + " " + redlock_path + " " + args, out), 60s);
    };
    const std::string env_nodes = "REDLOCK_NODES=" + node_uris(servers);
    const std::string quarantine_off = " --restart-quarantine off ";
    auto holder =
        spawn_shell("env " + env_nodes + " " + redlock_path + " run" + quarantine_off + "envheld -- sleep 60",
                    dir.file("holder"));
    BOOST_TEST_REQUIRE(wait_until([&] { return key_everywhere(servers, "envheld"); }),
                       read_file(dir.file("holder")));
    BOOST_TEST(with_env(env_nodes, "inspect envheld") == 0, read_file(out));
    BOOST_TEST(read_file(out).find("envheld: held") != std::string::npos, read_file(out));

    BOOST_TEST(
        with_env(env_nodes, "run" + quarantine_off + "--wait 0 --conflict-exit-code 9 envheld -- true") == 9,
        read_file(out));
    BOOST_TEST(read_file(out).find("not_acquired") != std::string::npos, read_file(out));
    BOOST_TEST(
        with_env(env_nodes, "run" + quarantine_off + "--conflict-exit-code 9 free -- sh -c 'exit 75'") == 75,
        read_file(out));
    BOOST_TEST(with_env(env_nodes, "run --conflict-exit-code 256 free -- true") == 2, read_file(out));
    BOOST_TEST(read_file(out).find("--conflict-exit-code") != std::string::npos, read_file(out));

    const auto config = write_config_file(dir, servers, "config");
    BOOST_TEST(with_env("REDLOCK_CONFIG=" + config, "run --wait 0 envheld -- true") == 75, read_file(out));
    BOOST_TEST(with_env("REDLOCK_CONFIG=" + config, "run free -- true") == 0, read_file(out));
    // A flag wins: the environment names a port nothing listens on.
    BOOST_TEST(with_env("REDLOCK_NODES=redis://127.0.0.1:1 REDLOCK_CONFIG=/nonexistent",
                        "run " + nodes + " free -- true") == 0,
               read_file(out));
    BOOST_TEST(with_env("REDLOCK_CONFIG=" + config + " " + env_nodes, "run free -- true") == 2,
               read_file(out));
    BOOST_TEST(read_file(out).find("REDLOCK_CONFIG and REDLOCK_NODES are both set") != std::string::npos,
               read_file(out));
    BOOST_TEST(with_env("REDLOCK_CONFIG=/nonexistent", "run free -- true") == 2, read_file(out));
    BOOST_TEST(read_file(out).find("REDLOCK_CONFIG /nonexistent: ") != std::string::npos, read_file(out));
    BOOST_TEST(with_env("REDLOCK_NODES=http://x", "run free -- true") == 2, read_file(out));
    BOOST_TEST(read_file(out).find("REDLOCK_NODES: ") != std::string::npos, read_file(out));

    ::kill(holder, SIGINT);
    BOOST_TEST(wait_child(holder, 20s) == 130, read_file(dir.file("holder")));
}

// A password kept off the command line: from --password-file's first line or REDLOCK_PASSWORD,
// percent-encoded into every node URI without credentials of its own (those win).
BOOST_AUTO_TEST_CASE(a_password_from_a_file_or_the_environment) {
    const std::string password = "p@ss:w/rd %1";
    redlock::test::redis_server_options opts;
    opts.extra_args = {"--requirepass", password};
    redis_server server(opts);
    scratch_dir dir;
    const auto out = dir.file("out");
    const auto password_file = dir.file("password");
    std::ofstream(password_file) << password << "\n";
    const auto address = "127.0.0.1:" + std::to_string(server.port());
    const std::string run = "run --nodes redis://" + address + " --restart-quarantine off ";
    const auto with_env = [&](const std::string& env, const std::string& args) {
        return wait_child(spawn_shell("env " + env + " " + redlock_path + " " + args, out), 60s);
    };
    BOOST_TEST(with_env("", run + "--wait 5s pw -- true") == 78, read_file(out));  // NOAUTH
    BOOST_TEST(with_env("'REDLOCK_PASSWORD=" + password + "'", run + "pw -- true") == 0, read_file(out));
    BOOST_TEST(with_env("", run + "--password-file " + password_file + " pw -- true") == 0, read_file(out));
    BOOST_TEST(
        with_env("REDLOCK_PASSWORD=wrong", run + "--password-file " + password_file + " pw -- true") == 0,
        read_file(out));
    BOOST_TEST(
        with_env("'REDLOCK_NODES=unix://" + server.unix_socket() + "' 'REDLOCK_PASSWORD=" + password + "'",
                 "run --restart-quarantine off pw -- true") == 0,
        read_file(out));
    // The URI's own credentials win.
    BOOST_TEST(
        with_env("'REDLOCK_PASSWORD=" + password + "'",
                 "run --nodes redis://:wrong@" + address + " --restart-quarantine off pw -- true") == 78,
        read_file(out));
    BOOST_TEST(read_file(out).find("WRONGPASS") != std::string::npos, read_file(out));
    BOOST_TEST(with_env("", run + "--password-file " + dir.file("none") + " pw -- true") == 2,
               read_file(out));
    BOOST_TEST(read_file(out).find("--password-file") != std::string::npos, read_file(out));
    BOOST_TEST(read_file(out).find(password) == std::string::npos, read_file(out));
}

// `redlock hold`: holds, renewing, until a signal or the end of its input (a pipe), printing
// the lease as `run` gives it to CMD; a lease lost while held is 70.
BOOST_FIXTURE_TEST_CASE(hold_keeps_the_lock_until_a_signal_or_the_end_of_its_input, three_servers) {
    const auto out = dir.file("out");
    const auto held_out = dir.file("held");
    const std::string hold = "hold " + nodes + " --ttl 2s ";
    // stdin /dev/null is not an end to wait for: `redlock hold job &` in a script reads it.
    auto holder = start_redlock(hold + "held < /dev/null", held_out);
    BOOST_TEST_REQUIRE(
        wait_until([&] { return read_file(held_out).find("REDLOCK_FENCES=") != std::string::npos; }),
        read_file(held_out));
    std::string token;
    for (const auto& s : servers) {
        const auto value = s->command({"GET", lock_key("held")});
        if (!value.str.empty()) token = value.str;
    }
    BOOST_TEST(
        read_file(held_out).find("REDLOCK_RESOURCE=held\nREDLOCK_TOKEN=" + token + "\n") != std::string::npos,
        read_file(held_out));
    // Still held after twice its ttl: renewed.
    BOOST_TEST(run_redlock(hold + "--wait 4s --conflict-exit-code 9 held", out) == 9, read_file(out));
    ::kill(holder, SIGTERM);
    BOOST_TEST(wait_child(holder, 20s) == 0, read_file(held_out));
    BOOST_TEST(!key_anywhere(servers, "held"));

    // Its input a pipe: the pipe's end lets go.
    const auto stop = dir.file("stop");
    auto piped = spawn_shell(
        "sh -c 'until [ -e " + stop + " ]; do sleep 0.05; done' | " + redlock_path + " " + hold + "piped",
        held_out);
    BOOST_TEST_REQUIRE(wait_until([&] { return key_anywhere(servers, "piped"); }), read_file(held_out));
    std::ofstream(stop) << "";
    BOOST_TEST(wait_child(piped, 20s) == 0, read_file(held_out));
    BOOST_TEST(!key_anywhere(servers, "piped"));

    // The key deleted under it: lost, 70.
    auto losing = start_redlock(hold + "losing < /dev/null", held_out);
    BOOST_TEST_REQUIRE(wait_until([&] { return key_everywhere(servers, "losing"); }), read_file(held_out));
    for (const auto& s : servers)
        s->command({"DEL", lock_key("losing")});
    BOOST_TEST(wait_child(losing, 20s) == 70, read_file(held_out));
    BOOST_TEST(read_file(held_out).find("lost the lock on \"losing\"") != std::string::npos,
               read_file(held_out));
}

// The command line is CLI11's: every command has a --help of its own that lists its flags (exit
// 0); a flag that is unknown, lacks its value or has a bad one is an error that names it (exit 2).
BOOST_AUTO_TEST_CASE(every_command_has_a_help_and_bad_flags_are_named) {
    scratch_dir dir;
    const auto out = dir.file("out");
    for (const auto& [command, flag] :
         std::vector<std::pair<std::string, std::string>>{{"run", "--max-hold"},
                                                          {"hold", "--conflict-exit-code"},
                                                          {"check", "--restart-quarantine"},
                                                          {"demo", "--cluster"},
                                                          {"bench", "--concurrency"},
                                                          {"inspect", "--json"},
                                                          {"unlock", "--force"}}) {
        BOOST_TEST(run_redlock(command + " --help", out) == 0, command);
        const auto help = read_file(out);
        BOOST_TEST(help.find("usage: redlock " + command) != std::string::npos, help);
        BOOST_TEST(help.find("\n  " + flag + " ") != std::string::npos, help);
        BOOST_TEST(help.find("\n  -h,--help ") != std::string::npos, help);
    }
    BOOST_TEST(run_redlock("--help", out) == 0);
    BOOST_TEST(read_file(out).find("\n  inspect ") != std::string::npos, read_file(out));
    BOOST_TEST(run_redlock("help", out) == 0);
    BOOST_TEST(read_file(out).find("\n  unlock ") != std::string::npos, read_file(out));
    BOOST_TEST(run_redlock("--version", out) == 0);
    BOOST_TEST(read_file(out) == "redlock " REDLOCK_PROJECT_VERSION "\n");
    BOOST_TEST(run_redlock("--help", out) == 0);
    BOOST_TEST(read_file(out).find("--version") != std::string::npos, read_file(out));

    struct usage_case {
        std::string args;
        std::string message;
    };
    for (const auto& c : std::vector<usage_case>{
             {"check --bogus", "redlock check: unknown option --bogus"},
             {"inspect --nodes", "--nodes: "},
             {"run --nodes redis://127.0.0.1:1 --wait", "--wait: "},
             {"run --nodes redis://127.0.0.1:1 --wait=soon r -- true", "--wait: \"soon\" is not a duration"},
             {"run --nodes redis://127.0.0.1:1 --permits 0 r -- true", "--permits: "},
             {"bench --seconds 99999", "--seconds: "},
             {"demo --workers=0", "--workers: "},
             // A flag after RESOURCE would have been a resource: "job", "--ttl" and "5s" locked.
             {"run --nodes redis://127.0.0.1:1 job --ttl 5s -- true",
              "redlock run: \"--ttl\" after RESOURCE looks like a flag: flags go before RESOURCE"},
             {"hold --nodes redis://127.0.0.1:1 job --ttl 5s",
              "redlock hold: \"--ttl\" after RESOURCE looks like a flag: flags go before RESOURCE"},
             {"hold --nodes redis://127.0.0.1:1", "redlock hold: no RESOURCE given"},
             {"inspect --nodes redis://127.0.0.1:1 job --json",
              "redlock inspect: \"--json\" after RESOURCE looks like a flag: flags go before RESOURCE"},
         }) {
        BOOST_TEST(run_redlock(c.args, out) == 2, c.args);
        BOOST_TEST(read_file(out).find(c.message) != std::string::npos, c.args << " -> " << read_file(out));
    }
}

// `--flag=value` as `--flag value`; after `--` the command's arguments reach it as they were given,
// those that look like flags of redlock's too.
BOOST_FIXTURE_TEST_CASE(flags_take_equals_values_and_the_commands_arguments_pass_through, three_servers) {
    const auto args = dir.file("args");
    const auto out = dir.file("out");
    BOOST_TEST(
        run_redlock("run --nodes=" + node_uris(servers) + " --restart-quarantine=off --ttl=5s --wait=2s " +
                        "--fenced job -- /bin/sh -c 'printf \"%s\\n\" \"$@\" > " + args +
                        "' sh --looks-like-flag --ttl=10x -- -h --help",
                    out) == 0,
        read_file(out));
    BOOST_TEST(read_file(args) == "--looks-like-flag\n--ttl=10x\n--\n-h\n--help\n");
    BOOST_TEST(wait_until([&] { return !key_anywhere(servers, "job"); }));
}

// The lock is taken from under a running command (its key deleted, as if it expired during a
// partition): the watchdog finds it gone, the command gets SIGTERM, redlock exits 70. A command
// that ignores SIGTERM gets SIGKILL after the grace period, before the validity would end.
// The keys go once the command runs (its trap set): the lease is granted then, with no SET
// still on its way to a node that would put a key back after the DEL and keep a majority.
BOOST_FIXTURE_TEST_CASE(a_command_that_outlives_its_lease_gets_sigterm_then_sigkill, three_servers) {
    const auto seen = dir.file("seen");
    auto steal = [&](const std::string& resource, const std::string& started) {
        BOOST_TEST_REQUIRE(wait_until([&] { return !read_file(started).empty(); }));
        for (const auto& s : servers)
            s->command({"DEL", lock_key(resource)});
    };

    const auto up1 = dir.file("up1"), up2 = dir.file("up2");
    auto polite =
        start_redlock(run + " --ttl 600ms --grace 300ms lost -- /bin/sh -c 'trap \"echo TERM >> " + seen +
                          "; exit 0\" TERM; echo up > " + up1 + "; while :; do sleep 0.05; done'",
                      dir.file("out1"));
    steal("lost", up1);
    BOOST_TEST(wait_child(polite, 20s) == 70, read_file(dir.file("out1")));
    BOOST_TEST(read_file(seen) == "TERM\n");
    BOOST_TEST(read_file(dir.file("out1")).find("lost the lock on \"lost\"") != std::string::npos);

    auto stubborn =
        start_redlock(run + " --ttl 600ms --grace 300ms lost2 -- /bin/sh -c 'trap \"\" TERM; echo up > " +
                          up2 + "; while :; do sleep 0.05; done'",
                      dir.file("out2"));
    steal("lost2", up2);
    BOOST_TEST(wait_child(stubborn, 20s) == 70, read_file(dir.file("out2")));
}

// A majority freezes: no renewal, and the lease runs out. A command that ignores SIGTERM is
// killed before the lease's validity ends, never after: the next holder, waiting in another
// `redlock run`, starts its command only after the first command died. The first command
// writes the time (bash's $EPOCHREALTIME, no fork) every 10 ms until it dies; the second writes
// it once when it starts. Before, SIGTERM came once the validity had run out and SIGKILL
// --grace after that, while the second command could already run.
BOOST_FIXTURE_TEST_CASE(a_command_is_killed_before_its_lease_runs_out_never_after, three_servers) {
    const auto ticks = dir.file("ticks"), started = dir.file("started");
    auto first =
        start_redlock(run + " --ttl 2s --grace 500ms frozen -- bash -c 'trap \"\" TERM; while :; do echo " +
                          "$EPOCHREALTIME >> " + ticks + "; sleep 0.01; done'",
                      dir.file("out1"));
    BOOST_TEST_REQUIRE(wait_until([&] { return !read_file(ticks).empty(); }));
    servers[1]->pause();
    servers[2]->pause();
    auto second = start_redlock(run + " --wait 30s frozen -- bash -c 'echo $EPOCHREALTIME > " + started + "'",
                                dir.file("out2"));
    // The first lease's key is gone from the live node: resume the others at once, so that the
    // second acquires as soon as the first's keys expired there too.
    const bool expired = wait_until([&] { return !redlock::test::key_exists(*servers[0], "frozen"); }, 20s);
    servers[1]->resume();
    servers[2]->resume();
    BOOST_TEST_REQUIRE(expired);
    BOOST_TEST(wait_child(first, 20s) == 70, read_file(dir.file("out1")));
    BOOST_TEST(wait_child(second, 30s) == 0, read_file(dir.file("out2")));
    const auto all_ticks = read_file(ticks);
    const auto last_line = all_ticks.substr(all_ticks.rfind('\n', all_ticks.size() - 2) + 1);
    const double last_tick = std::stod(last_line);
    const double second_start = std::stod(read_file(started));
    BOOST_TEST(last_tick < second_start, "the first command wrote at " << std::fixed << last_tick
                                                                       << ", the second started at "
                                                                       << second_start);
    BOOST_TEST(read_file(dir.file("out1")).find("was not renewed") != std::string::npos,
               read_file(dir.file("out1")));
}

BOOST_FIXTURE_TEST_CASE(a_grace_the_ttl_cannot_fit_is_a_usage_error, three_servers) {
    const auto out = dir.file("out");
    BOOST_TEST(run_redlock(run + " --ttl 1s --grace 600ms r -- true", out) == 2);
    BOOST_TEST(read_file(out).find("--grace: at most half of --ttl") != std::string::npos, read_file(out));
    BOOST_TEST(run_redlock(run + " --ttl 1s --grace 500ms r -- true", out) == 0, read_file(out));
    // Without --grace: 5 s, or half the ttl.
    BOOST_TEST(run_redlock(run + " --ttl 1s r -- true", out) == 0, read_file(out));
}

// Ctrl-C while the command runs: the command is stopped, the lock released, exit 130 (an exit
// status of its own: a process that the signal ended, as the default action would, is
// killed_by(SIGINT) here).
BOOST_FIXTURE_TEST_CASE(an_interrupt_stops_the_command_and_releases_the_lock, three_servers) {
    auto holding = start_redlock(run + " intr -- sleep 30", dir.file("out"));
    BOOST_TEST_REQUIRE(wait_until([&] { return key_everywhere(servers, "intr"); }));
    ::kill(holding, SIGINT);
    BOOST_TEST(wait_child(holding, 20s) == 130, read_file(dir.file("out")));
    BOOST_TEST(!key_anywhere(servers, "intr"));  // released before it exited

    // Interrupted while waiting: 130 too, and nothing of the waiter is left.
    const auto waiting_on = [&](std::int64_t n) {
        std::int64_t all = 0;
        for (const auto& s : servers)
            all +=
                s->command({"PUBSUB", "SHARDNUMSUB", key_tag("intr") + ":released"}).elements.at(1).integer;
        return all == n;
    };
    auto holder = start_redlock(run + " intr -- sleep 30", dir.file("holder"));
    BOOST_TEST_REQUIRE(wait_until([&] { return key_everywhere(servers, "intr"); }));
    auto waiter = start_redlock(run + " --wait 30s intr -- true", dir.file("waiter"));
    // It waits for the release message on every node.
    BOOST_TEST_REQUIRE(wait_until([&] { return waiting_on(static_cast<std::int64_t>(servers.size())); }),
                       read_file(dir.file("waiter")));
    ::kill(waiter, SIGINT);
    BOOST_TEST(wait_child(waiter, 20s) == 130, read_file(dir.file("waiter")));
    BOOST_TEST(waiting_on(0));
    ::kill(holder, SIGINT);
    BOOST_TEST(wait_child(holder, 20s) == 130, read_file(dir.file("holder")));
}

// `--permits K`: K runs hold the resource at once and the next is refused. A holder killed with
// SIGKILL releases nothing: its permit stays on the servers until its ttl runs out, then it is
// free again.
BOOST_FIXTURE_TEST_CASE(permits_are_shared_and_a_killed_holders_permit_comes_back_after_its_ttl,
                        three_servers) {
    const auto permits_held = [&](std::int64_t n) {
        return redlock::test::members_everywhere(servers, "sem", n);
    };
    const auto holder = [&](const std::string& name) {
        return start_redlock(run + " --permits 2 --ttl 1s sem -- /bin/sh -c 'echo $$ > " +
                                 dir.file(name + ".pid") + "; exec sleep 60'",
                             dir.file(name));
    };
    auto killed = holder("killed");
    auto kept = holder("kept");
    BOOST_TEST_REQUIRE(wait_until([&] { return permits_held(2); }), read_file(dir.file("killed")));
    const auto out = dir.file("out");
    BOOST_TEST(run_redlock(run + " --permits 2 --wait 0 sem -- true", out) == 75, read_file(out));

    BOOST_TEST_REQUIRE(wait_until([&] { return !read_file(dir.file("killed.pid")).empty(); }));
    ::kill(killed, SIGKILL);
    BOOST_TEST(wait_child(killed, 10s) == redlock::test::killed_by(SIGKILL));
    ::kill(std::stoi(read_file(dir.file("killed.pid"))), SIGKILL);  // its command, orphaned
    BOOST_TEST(permits_held(2));                                    // nobody gave it back
    BOOST_TEST(run_redlock(run + " --permits 2 --wait 20s sem -- true", out) == 0, read_file(out));

    ::kill(kept, SIGINT);
    BOOST_TEST(wait_child(kept, 20s) == 130, read_file(dir.file("kept")));
    BOOST_TEST(wait_until([&] { return !key_anywhere(servers, "sem"); }));
    BOOST_TEST(run_redlock(run + " --permits 2 --fenced sem -- true", out) == 2);
    BOOST_TEST(read_file(out).find("--permits: not with --fenced") != std::string::npos, read_file(out));
}

// `--shared` runs hold RESOURCE together; a `--writer` waits for them, and while it waits no new
// `--shared` run gets in; `--max-hold` ends a run as a lost lease does.
BOOST_FIXTURE_TEST_CASE(shared_runs_overlap_a_writer_waits_for_them_and_max_hold_ends_a_run, three_servers) {
    const auto count_everywhere = [&](const std::string& key, std::int64_t n) {
        for (const auto& s : servers)
            if (s->command({"ZCARD", key}).integer != n) return false;
        return true;
    };
    auto r1 = start_redlock(run + " --shared --ttl 2s rw -- sleep 60", dir.file("r1"));
    auto r2 = start_redlock(run + " --shared --ttl 2s rw -- sleep 60", dir.file("r2"));
    BOOST_TEST_REQUIRE(wait_until([&] { return count_everywhere(lock_key("rw"), 2); }),
                       read_file(dir.file("r1")));
    const auto out = dir.file("out");
    BOOST_TEST(run_redlock(run + " --writer --wait 0 rw -- true", out) == 75, read_file(out));
    auto writer = start_redlock(run + " --writer --wait 60s rw -- true", dir.file("w"));
    BOOST_TEST_REQUIRE(wait_until([&] { return count_everywhere(key_tag("rw") + ":rw:waiting", 1); }),
                       read_file(dir.file("w")));
    BOOST_TEST(run_redlock(run + " --shared --wait 0 rw -- true", out) == 75, read_file(out));
    ::kill(r1, SIGINT);
    ::kill(r2, SIGINT);
    BOOST_TEST(wait_child(r1, 20s) == 130, read_file(dir.file("r1")));
    BOOST_TEST(wait_child(r2, 20s) == 130, read_file(dir.file("r2")));
    BOOST_TEST(wait_child(writer, 60s) == 0, read_file(dir.file("w")));
    BOOST_TEST(wait_until([&] { return !key_anywhere(servers, "rw"); }));

    BOOST_TEST(run_redlock(run + " --ttl 1s --max-hold 1500ms held -- sleep 30", out) == 70, read_file(out));
    BOOST_TEST(run_redlock(run + " --shared --writer rw -- true", out) == 2);
    BOOST_TEST(read_file(out).find("one or the other") != std::string::npos, read_file(out));
    BOOST_TEST(run_redlock(run + " --shared --fenced rw -- true", out) == 2);
    BOOST_TEST(read_file(out).find("--fenced: not with --shared") != std::string::npos, read_file(out));
}

// `redlock inspect` shows the holder (exit 0) or a free resource (exit 1), as text or JSON;
// `redlock unlock --force` frees it, and refuses to run without --force.
BOOST_FIXTURE_TEST_CASE(inspect_shows_the_holder_and_unlock_force_frees_it, three_servers) {
    const std::string nodes_only = nodes;
    const auto out = dir.file("out");
    BOOST_TEST(run_redlock("inspect " + nodes_only + " idle", out) == 1, read_file(out));
    BOOST_TEST(read_file(out).find("idle: free") != std::string::npos, read_file(out));

    auto holding = start_redlock(run + " --ttl 15s --label deploy held -- sleep 60", dir.file("holder"));
    BOOST_TEST_REQUIRE(wait_until([&] {
        for (const auto& s : servers)
            if (!redlock::test::key_exists(*s, "held")) return false;
        return true;
    }));
    const auto token = servers[0]->command({"GET", lock_key("held")}).str;
    BOOST_TEST(run_redlock("inspect " + nodes_only + " held", out) == 0, read_file(out));
    // Who holds: the redlock process, on this host, with its label.
    char host[256] = {};
    BOOST_TEST_REQUIRE(::gethostname(host, sizeof host - 1) == 0);
    const auto who = " (pid " + std::to_string(holding) + " on " + host + ", label deploy)";
    BOOST_TEST(read_file(out).find("held: held; " + token + who + " (quorum 2 of 3)") != std::string::npos,
               read_file(out));
    BOOST_TEST(read_file(out).find(": lock, ") != std::string::npos, read_file(out));
    BOOST_TEST(run_redlock("inspect --json " + nodes_only + " held", out) == 0, read_file(out));
    BOOST_TEST(read_file(out).find("\"holders\":[\"" + token + "\"]") != std::string::npos, read_file(out));
    BOOST_TEST(read_file(out).find("\"who\":[{\"host\":\"" + std::string(host) +
                                   "\",\"label\":\"deploy\",\"pid\":" + std::to_string(holding) + "}]") !=
                   std::string::npos,
               read_file(out));

    BOOST_TEST(run_redlock("unlock " + nodes_only + " held", out) == 2, read_file(out));
    BOOST_TEST(read_file(out).find("--force is required") != std::string::npos, read_file(out));
    BOOST_TEST(key_anywhere(servers, "held"));
    BOOST_TEST(run_redlock("unlock --force " + nodes_only + " held", out) == 0, read_file(out));
    BOOST_TEST(read_file(out).find("held: deleted on 3 of 3 nodes") != std::string::npos, read_file(out));
    BOOST_TEST(!key_anywhere(servers, "held"));
    // The holder's watchdog finds the lock gone: its command is stopped, and it exits 70.
    BOOST_TEST(wait_child(holding, 30s) == 70, read_file(dir.file("holder")));
}

// On a terminal (a pseudo-terminal from script(1)) the waiter shows how long it has waited and
// how long the holder's lease has left, on one line rewritten in place.
BOOST_FIXTURE_TEST_CASE(a_waiter_on_a_terminal_shows_its_wait_and_the_holders_time_left, three_servers) {
    const auto screen = waiter_screen(dir, run, "busy", "1.5", [&] { return key_anywhere(servers, "busy"); });
    BOOST_TEST(screen.find("\r\033[Kredlock: waited ") != std::string::npos, screen);
    BOOST_TEST(screen.find("for \"busy\"; the holder's lease has ") != std::string::npos, screen);
    BOOST_TEST(screen.find("\r\033[K") != std::string::npos);  // erased once it holds the lock
}

// The same through a cluster node: the PTTL goes to the master of the key's slot, here one that
// is not the first seed (which would answer MOVED).
BOOST_AUTO_TEST_CASE(a_waiter_on_a_cluster_node_shows_the_holders_time_left) {
    redlock::test::redis_cluster_options options;
    options.replicas_per_master = 0;
    redlock::test::redis_cluster cluster(options);
    scratch_dir dir;
    std::string resource;
    for (int i = 0; resource.empty(); ++i) {
        const auto candidate = "busy" + std::to_string(i);
        if (&cluster.master_of_slot(redlock::redis::detail::key_slot(lock_key(candidate))) !=
            &cluster.server(0))
            resource = candidate;
    }
    auto& master = cluster.master_of_slot(redlock::redis::detail::key_slot(lock_key(resource)));
    const auto run = "run --nodes " + cluster.uri() + " --restart-quarantine off";
    const auto screen =
        waiter_screen(dir, run, resource, "3", [&] { return redlock::test::key_exists(master, resource); });
    BOOST_TEST(screen.find("for \"" + resource + "\"; the holder's lease has ") != std::string::npos, screen);
}

// A cluster that announces a name the command cannot resolve: `--map-address FROM=TO` leads the
// command to the address it reaches; without it, no master can be reached.
BOOST_AUTO_TEST_CASE(map_address_leads_run_to_a_cluster_behind_announced_names) {
    redlock::test::redis_cluster_options options;
    options.replicas_per_master = 0;
    redlock::test::redis_cluster cluster(options);
    cluster.announce_hostname("redis.invalid");
    scratch_dir dir;
    const auto out = dir.file("out");
    const auto run = "run --nodes redis-cluster://127.0.0.1:" + std::to_string(cluster.server(0).port()) +
                     " --restart-quarantine off --failover-quarantine off";
    BOOST_TEST(run_redlock(run + " --map-address redis.invalid=127.0.0.1 mapped -- echo ran", out) == 0,
               read_file(out));
    BOOST_TEST(read_file(out).find("ran") != std::string::npos, read_file(out));
    // A wait of some rounds: the last names the connection's own failure, whenever the lookup fails.
    BOOST_TEST(run_redlock(run + " --wait 2s mapped -- echo ran", out) != 0, read_file(out));
    BOOST_TEST(read_file(out).find("redis.invalid") != std::string::npos, read_file(out));
    BOOST_TEST(run_redlock(run + " --map-address redis.invalid mapped -- true", out) == 2, read_file(out));
    BOOST_TEST(read_file(out).find("FROM=TO") != std::string::npos, read_file(out));
}

// The same through a Sentinel node: the PTTL goes to the master the sentinels name.
BOOST_AUTO_TEST_CASE(a_waiter_on_a_sentinel_node_shows_the_holders_time_left) {
    redlock::test::redis_sentinel_group group;
    auto& master = group.master();
    scratch_dir dir;
    const auto run = "run --nodes " + group.uri() + " --restart-quarantine off";
    const auto screen =
        waiter_screen(dir, run, "busy", "3", [&] { return redlock::test::key_exists(master, "busy"); });
    BOOST_TEST(screen.find("for \"busy\"; the holder's lease has ") != std::string::npos, screen);
}

// Fresh servers vote only after their restart quarantine (max_ttl and a bit; 61 s by default).
// A wait that ends before then fails at once, saying why; a longer one shows on its status line
// which node it waits for and how long, then runs the command.
BOOST_AUTO_TEST_CASE(run_tells_of_a_quarantine_at_once) {
    auto servers = start_redis_servers(3);
    scratch_dir dir;
    const auto out = dir.file("out");
    const auto t0 = std::chrono::steady_clock::now();
    BOOST_TEST(run_redlock("run --nodes " + node_uris(servers) + " --wait 30s job -- true", out) == 75,
               read_file(out));
    BOOST_TEST((std::chrono::steady_clock::now() - t0 < 30s));
    const auto said = read_file(out);
    BOOST_TEST(said.find("no quorum of nodes votes before the wait ends") != std::string::npos, said);
    BOOST_TEST(said.find("(restart quarantine: it (re)started less than max_ttl ago; it votes in 6") !=
                   std::string::npos,
               said);
    BOOST_TEST(!key_anywhere(servers, "job"));

    const auto config = dir.file("short.json");
    redis_server fresh;
    std::ofstream(config) << "{\"nodes\": [\"" << fresh.uri() << "\"], \"max_ttl_ms\": 3000}";
    const auto typescript = dir.file("typescript");
    auto waiter = spawn_shell("script -qec '" + redlock_path + " run --config " + config +
                                  " --ttl 2s --wait 30s job -- echo ran' " + typescript,
                              "/dev/null");
    BOOST_TEST(wait_child(waiter, 40s) == 0, read_file(typescript));
    const auto screen = read_file(typescript);
    BOOST_TEST(screen.find("for \"job\"; node " + fresh.uri() + ": restart quarantine, votes in ") !=
                   std::string::npos,
               screen);
    BOOST_TEST(screen.find("ran") != std::string::npos, screen);
}

// A node `check` cannot reach is not "safe": nothing is known of it (3, "NOT CHECKED"), unless
// another is unsafe (4); --json says what the lines say.
BOOST_AUTO_TEST_CASE(check_calls_a_node_it_cannot_reach_not_checked_and_speaks_json) {
    auto servers = start_redis_servers(2);
    scratch_dir dir;
    const auto out = dir.file("out");
    redis_server gone;
    const auto gone_uri = gone.uri();
    gone.stop();
    const auto nodes = " --nodes " + node_uris(servers) + "," + gone_uri;
    BOOST_TEST(run_redlock("check" + nodes, out) == 3, read_file(out));
    BOOST_TEST(
        read_file(out).find("unchecked: nodes[2] " + gone_uri + " did not answer (") != std::string::npos,
        read_file(out));
    BOOST_TEST(
        read_file(out).find("3 node(s) checked: 0 unsafe, 1 not answering, 0 warning(s): NOT CHECKED\n") !=
            std::string::npos,
        read_file(out));
    BOOST_TEST(run_redlock("check --nodes " + gone_uri, out) == 3, read_file(out));
    BOOST_TEST(run_redlock("check" + nodes + " --restart-quarantine off", out) == 4, read_file(out));

    // --json: one object (nlohmann::json's dump(2)), the same findings and verdict.
    const auto has = [&](const std::string& part) { return read_file(out).find(part) != std::string::npos; };
    BOOST_TEST(run_redlock("check --json" + nodes, out) == 3, read_file(out));
    BOOST_TEST(read_file(out).starts_with("{\n"), read_file(out));
    BOOST_TEST(read_file(out).ends_with("\n}\n"), read_file(out));
    BOOST_TEST(has("\"verdict\": \"NOT CHECKED\""), read_file(out));
    BOOST_TEST(has("\"exit_status\": 3"), read_file(out));
    BOOST_TEST(has("\"nodes\": 3"), read_file(out));
    BOOST_TEST(has("\"unchecked\": 1"), read_file(out));
    BOOST_TEST(has("\"unsafe\": 0"), read_file(out));
    BOOST_TEST(has("\"level\": \"unchecked\",\n      \"text\": \"nodes[2] " + gone_uri + " did not answer ("),
               read_file(out));
    BOOST_TEST(!has("\nunchecked: "), read_file(out));  // no text lines
    BOOST_TEST(run_redlock("check --json" + nodes + " --restart-quarantine off", out) == 4, read_file(out));
    BOOST_TEST(has("\"verdict\": \"UNSAFE\""), read_file(out));
    BOOST_TEST(has("\"unsafe\": 2"), read_file(out));  // no AOF, on each server that answered
    BOOST_TEST(run_redlock("check --json --nodes " + node_uris(servers), out) == 1, read_file(out));  // N = 2
    BOOST_TEST(has("\"verdict\": \"safe, with warnings\""), read_file(out));
}

BOOST_AUTO_TEST_CASE(check_reports_replicas_duplicates_and_eviction) {
    auto servers = start_redis_servers(3);
    scratch_dir dir;
    const auto out = dir.file("out");
    // Fresh servers without persistence are safe with the quarantine (the default), which keeps
    // them from voting for a minute: check says so.
    BOOST_TEST(run_redlock("check --nodes " + node_uris(servers), out) == 0, read_file(out));
    BOOST_TEST(read_file(out).find("info: nodes[0] " + servers[0]->uri() + ": up ") != std::string::npos,
               read_file(out));
    BOOST_TEST(read_file(out).find(" s: in the restart quarantine for about ") != std::string::npos,
               read_file(out));
    BOOST_TEST(read_file(out).find("info: no quorum of nodes votes for about ") != std::string::npos,
               read_file(out));
    BOOST_TEST(run_redlock("check --nodes " + node_uris(servers) + " --restart-quarantine off", out) == 4);
    BOOST_TEST(read_file(out).find("no AOF and restart quarantine off") != std::string::npos, read_file(out));

    // The same server twice (another db of it): one run_id.
    BOOST_TEST(run_redlock("check --nodes " + node_uris(servers) + "," + servers[0]->uri() + "/1", out) == 4);
    BOOST_TEST(read_file(out).find("nodes[3] redis://127.0.0.1:" + std::to_string(servers[0]->port()) +
                                   "/1 is the same server as nodes[0]") != std::string::npos,
               read_file(out));
    BOOST_TEST(read_file(out).find("N = 4 is even") != std::string::npos);

    redlock::test::redis_server_options replica_options;
    replica_options.extra_args = {"--replicaof", "127.0.0.1", std::to_string(servers[0]->port())};
    redis_server replica(replica_options);
    redlock::test::redis_server_options lru_options;
    lru_options.extra_args = {"--maxmemory", "64mb", "--maxmemory-policy", "allkeys-lru"};
    redis_server lru(lru_options);
    BOOST_TEST(
        run_redlock("check --nodes " + servers[1]->uri() + "," + replica.uri() + "," + lru.uri(), out) == 4);
    const auto report = read_file(out);
    BOOST_TEST(report.find("nodes[1] " + replica.uri() + " is a replica") != std::string::npos, report);
    BOOST_TEST(report.find("nodes[2] " + lru.uri() + ": maxmemory-policy allkeys-lru") != std::string::npos,
               report);
}

// What the check sees of the protocol's remaining assumptions on real servers: a node reached
// through a proxy (the server's end of the connection is not what was dialed), and a larger
// max_ttl that another client recorded on the nodes.
BOOST_AUTO_TEST_CASE(check_sees_a_proxy_and_a_larger_max_ttl_of_another_client) {
    auto servers = start_redis_servers(1);
    scratch_dir dir;
    const auto out = dir.file("out");
    BOOST_TEST(run_redlock("check --nodes " + servers[0]->uri(), out) == 0, read_file(out));
    redlock::test::tcp_proxy proxy(servers[0]->port());
    BOOST_TEST(run_redlock("check --nodes " + proxy.uri(), out) == 1, read_file(out));
    BOOST_TEST(read_file(out).find("warning: nodes[0] " + proxy.uri() +
                                   ": the server sees our connection arrive at 127.0.0.1:" +
                                   std::to_string(servers[0]->port()) +
                                   ", not at 127.0.0.1:" + std::to_string(proxy.port())) != std::string::npos,
               read_file(out));

    // A client with max_ttl 120 s records it when it connects.
    boost::asio::io_context ioc;
    auto cfg = redlock::test::lock_config(servers);
    cfg.restart_quarantine = true;
    cfg.max_ttl = 120s;
    redlock::client other(ioc.get_executor(), cfg);
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (redlock::test::recorded_max_ttl(*servers[0]) != "120000" &&
           std::chrono::steady_clock::now() < deadline)
        ioc.run_for(10ms);
    BOOST_TEST_REQUIRE(redlock::test::recorded_max_ttl(*servers[0]) == "120000");
    BOOST_TEST(run_redlock("check --nodes " + servers[0]->uri(), out) == 0, read_file(out));
    BOOST_TEST(read_file(out).find("info: a client of these nodes uses max_ttl 120000 ms, more than this "
                                   "config's 60000 ms") != std::string::npos,
               read_file(out));
}

// redlock demo with its own servers: grants with 5 nodes and with 3, none with 2; afterwards
// none of its servers is left running.
BOOST_AUTO_TEST_CASE(demo_starts_kills_and_stops_its_own_servers) {
    scratch_dir dir;
    const auto out = dir.file("demo");
    BOOST_TEST(run_redlock("demo --seconds 1 --workers 2", out) == 0, read_file(out));
    const auto text = read_file(out);
    BOOST_TEST(text.find("killing node 3") != std::string::npos, text);
    BOOST_TEST(text.find("granted") != std::string::npos);
    BOOST_TEST(text.find("(3 of 5 granted)") != std::string::npos);
    BOOST_TEST(text.find("quorum_unreachable") != std::string::npos);
    // Its servers' ports, from the first line: nothing answers there any more.
    std::istringstream first(text.substr(0, text.find('\n')));
    std::string word;
    int ports = 0;
    while (first >> word) {
        unsigned port = 0;
        if (std::sscanf(word.c_str(), "redis://127.0.0.1:%u", &port) != 1) continue;
        ++ports;
        BOOST_TEST(!accepts_connections(static_cast<unsigned short>(port)), word);
    }
    BOOST_TEST(ports == 5);
}

// redlock demo --cluster: its own 6-server cluster; after the kill of the lock's slot master,
// grants fail until the replica takes over, then go on; afterwards none of its servers runs.
BOOST_AUTO_TEST_CASE(demo_cluster_fails_over_and_grants_go_on) {
    scratch_dir dir;
    const auto out = dir.file("demo-cluster");
    BOOST_TEST(run_redlock("demo --cluster --seconds 3 --workers 2", out) == 0, read_file(out));
    const auto text = read_file(out);
    const auto killed = text.find("the master of the lock's slot =====");
    const auto took_over = text.find("its replica, took over");
    BOOST_TEST_REQUIRE(killed != std::string::npos, text);
    BOOST_TEST_REQUIRE(took_over != std::string::npos, text);
    BOOST_TEST(text.find("granted") < killed, text);
    BOOST_TEST(text.find("quorum_unreachable", killed) < took_over, text);
    BOOST_TEST(text.find("granted", took_over) != std::string::npos, text);
    BOOST_TEST(text.find("(1 of 1 granted)") != std::string::npos);
    const auto uri_at = text.find("redis-cluster://");
    BOOST_TEST_REQUIRE(uri_at != std::string::npos);
    std::istringstream seeds(text.substr(uri_at + 16, text.find('\n', uri_at) - uri_at - 16));
    std::string seed;
    int ports = 0;
    while (std::getline(seeds, seed, ',')) {
        unsigned port = 0;
        if (std::sscanf(seed.c_str(), "127.0.0.1:%u", &port) != 1) continue;
        ++ports;
        BOOST_TEST(!accepts_connections(static_cast<unsigned short>(port)), seed);
    }
    BOOST_TEST(ports == 6);
    BOOST_TEST(run_redlock("demo --cluster --nodes redis://127.0.0.1:1", out) == 2);
}

// redlock bench on servers of its own: one run at N = 1 and one at N = 5, every pair completed.
BOOST_AUTO_TEST_CASE(bench_reports_both_node_counts_as_json) {
    scratch_dir dir;
    const auto out = dir.file("bench");
    BOOST_TEST(run_redlock("bench --seconds 1 --concurrency 1 --json", out) == 0, read_file(out));
    const auto text = read_file(out);
    BOOST_TEST(text.find("\"nodes\":1,") != std::string::npos, text);
    BOOST_TEST(text.find("\"nodes\":5,") != std::string::npos, text);
    std::size_t clean_runs = 0;
    for (auto at = text.find("\"failures\":0,"); at != std::string::npos;
         at = text.find("\"failures\":0,", at + 1))
        ++clean_runs;
    BOOST_TEST(clean_runs == 2u, text);
    BOOST_TEST(text.find("\"pairs\":0,") == std::string::npos, text);
    BOOST_TEST(run_redlock("bench --concurrency 0", out) == 2);
}

// A cluster node on the command line: its seeds follow its URI; the lock lives on the master of
// the resource's slot. `check` reads the slot map and checks every master: with replicas and a
// cluster-node-timeout (5 s) shorter than max_ttl, a failover can come within a lease, which only
// the failover quarantine makes safe.
BOOST_AUTO_TEST_CASE(run_and_check_take_a_cluster_node) {
    redlock::test::redis_cluster cluster;
    scratch_dir dir;
    const auto out = dir.file("out");
    const auto env = dir.file("env");
    const auto nodes = "--nodes " + cluster.uri() + " --restart-quarantine off";
    BOOST_TEST(
        run_redlock("run " + nodes + " job -- /bin/sh -c 'echo $REDLOCK_TOKEN > " + env + "'", out) == 0,
        read_file(out));
    // A token (32 hex digits, then who holds) and the newline echo adds.
    const auto token = read_file(env);
    BOOST_TEST(token.find_first_not_of("0123456789abcdef") == 32u, token);
    BOOST_TEST(redlock::identity_of(token.substr(0, token.size() - 1)).has_value(), token);

    const auto voter = "nodes[0] redis-cluster://" + cluster.seeds();
    BOOST_TEST(run_redlock("check --nodes " + cluster.uri(), out) == 0, read_file(out));
    auto report = read_file(out);
    BOOST_TEST(
        report.find("info: " + voter +
                    ": cluster-node-timeout 5000 ms is shorter than max_ttl 60000 ms: a replica can be "
                    "promoted while a lease is held") != std::string::npos,
        report);
    BOOST_TEST(
        report.find("1 node(s) checked: 0 unsafe, 0 not answering, 0 warning(s): safe") != std::string::npos,
        report);

    // Both quarantines off: the failover quarantine does not go off with the restart one.
    BOOST_TEST(run_redlock("check " + nodes + " --failover-quarantine off", out) == 4, read_file(out));
    report = read_file(out);
    BOOST_TEST(report.find("unsafe: " + voter + ": cluster-node-timeout 5000 ms is shorter than max_ttl") !=
                   std::string::npos,
               report);
    // Every master is probed as a server is: without AOF, the quarantine off is unsafe on each.
    for (auto* master : cluster.masters()) {
        BOOST_TEST(report.find("unsafe: nodes[0] master 127.0.0.1:" + std::to_string(master->port()) +
                               ": no AOF and restart quarantine off") != std::string::npos,
                   report);
    }
    BOOST_TEST(report.find("has no replica") == std::string::npos, report);
}

// A cluster whose masters have no replica: a failover is impossible, each master's slots go
// down with it (warnings); the masters of one cluster are one voter, and none is "the same
// server" as another, but a master listed again as a server of its own votes twice. Seeds that
// are down or are no cluster nodes are said, with the server's words.
BOOST_AUTO_TEST_CASE(check_reads_every_master_of_a_cluster_without_replicas) {
    redlock::test::redis_cluster_options options;
    options.replicas_per_master = 0;
    redlock::test::redis_cluster cluster(options);
    scratch_dir dir;
    const auto out = dir.file("out");
    BOOST_TEST(run_redlock("check --nodes " + cluster.uri(), out) == 1, read_file(out));
    auto report = read_file(out);
    const auto masters = cluster.masters();
    BOOST_TEST_REQUIRE(masters.size() == 3u);
    for (auto* master : masters) {
        BOOST_TEST(report.find("warning: nodes[0] master 127.0.0.1:" + std::to_string(master->port()) +
                               " has no replica: a failover is impossible; its slots go down with it") !=
                       std::string::npos,
                   report);
    }
    BOOST_TEST(report.find("unsafe: ") == std::string::npos, report);
    BOOST_TEST(report.find("same server") == std::string::npos, report);
    BOOST_TEST(report.find("cluster-node-timeout") == std::string::npos, report);  // no failover can come

    // A user refused CLUSTER SLOTS (ACL): the map by CLUSTER SHARDS, as the client reads it.
    for (std::size_t i = 0; i < cluster.size(); ++i) {
        const auto reply = cluster.server(i).command(
            {"ACL", "SETUSER", "shards-only", "on", ">secret", "~*", "&*", "+@all", "-cluster|slots"});
        BOOST_TEST_REQUIRE(reply.str == "OK", redlock::resp::to_string(reply));
    }
    BOOST_TEST(run_redlock("check --nodes redis-cluster://shards-only:secret@127.0.0.1:" +
                               std::to_string(masters[0]->port()),
                           out) == 1,
               read_file(out));
    report = read_file(out);
    BOOST_TEST(report.find("unsafe: ") == std::string::npos, report);
    BOOST_TEST(report.find("CLUSTER SLOTS") == std::string::npos, report);
    for (auto* master : masters)
        BOOST_TEST(report.find("master 127.0.0.1:" + std::to_string(master->port()) + " has no replica") !=
                       std::string::npos,
                   report);

    // One of its masters again, as a server: a second voter on the same server.
    const auto port = std::to_string(masters[1]->port());
    BOOST_TEST(run_redlock("check --nodes " + cluster.uri() + ",redis://127.0.0.1:" + port, out) == 4,
               read_file(out));
    report = read_file(out);
    BOOST_TEST(report.find("unsafe: nodes[1] redis://127.0.0.1:" + port +
                           " is the same server as nodes[0] master 127.0.0.1:" + port) != std::string::npos,
               report);
    BOOST_TEST(report.find("N = 2") != std::string::npos, report);

    // A seed that is down is passed over; a plain server as the only seed gives no slot map.
    auto plain = start_redis_servers(1);
    redlock::test::redis_server_options dead_options;
    redis_server dead(dead_options);
    const auto dead_port = std::to_string(dead.port());
    dead.stop();
    BOOST_TEST(
        run_redlock("check --nodes redis-cluster://127.0.0.1:" + dead_port + "," + cluster.seeds(), out) == 1,
        read_file(out));
    BOOST_TEST(read_file(out).find(": seed 127.0.0.1:" + dead_port) != std::string::npos, read_file(out));
    BOOST_TEST(run_redlock("check --nodes redis-cluster://127.0.0.1:" + dead_port, out) == 3, read_file(out));
    BOOST_TEST(read_file(out).find("unchecked: nodes[0] redis-cluster://127.0.0.1:" + dead_port +
                                   " did not answer") != std::string::npos,
               read_file(out));
    const auto plain_seed = "127.0.0.1:" + std::to_string(plain[0]->port());
    BOOST_TEST(run_redlock("check --nodes redis-cluster://" + plain_seed, out) == 4, read_file(out));
    BOOST_TEST(read_file(out).find("unsafe: nodes[0] redis-cluster://" + plain_seed +
                                   ": CLUSTER SLOTS failed (" + plain_seed +
                                   ": ERR This instance has cluster support disabled)") != std::string::npos,
               read_file(out));
}

// A master watched by three sentinels, with two replicas: safe with the quarantine (a failover
// within a lease is only said); without it, unsafe. A name no sentinel knows is unsafe; a
// sentinel that is down, or a URI that lists too few, is a warning.
BOOST_AUTO_TEST_CASE(check_asks_the_sentinels_and_checks_the_master_they_name) {
    redlock::test::redis_sentinel_group group;
    scratch_dir dir;
    const auto out = dir.file("out");
    const auto voter = "nodes[0] redis-sentinel://" + group.sentinel_addresses() + "#mymaster";
    const auto master = "nodes[0] master 127.0.0.1:" + std::to_string(group.master().port());
    BOOST_TEST(run_redlock("check --nodes " + group.uri(), out) == 0, read_file(out));
    auto report = read_file(out);
    BOOST_TEST(
        report.find("info: " + voter + ": down-after-milliseconds 2000 is shorter than max_ttl 60000 ms") !=
            std::string::npos,
        report);
    BOOST_TEST(report.find("unsafe: ") == std::string::npos, report);
    BOOST_TEST(report.find("warning: ") == std::string::npos, report);

    BOOST_TEST(
        run_redlock("check --nodes " + group.uri() + " --restart-quarantine off --failover-quarantine off",
                    out) == 4,
        read_file(out));
    report = read_file(out);
    BOOST_TEST(report.find("unsafe: " + voter + ": down-after-milliseconds 2000 is shorter than max_ttl") !=
                   std::string::npos,
               report);
    BOOST_TEST(report.find("unsafe: " + master + ": no AOF and restart quarantine off") != std::string::npos,
               report);

    const auto unknown = "redis-sentinel://" + group.sentinel_addresses() + "#nosuch";
    BOOST_TEST(run_redlock("check --nodes " + unknown, out) == 4, read_file(out));
    BOOST_TEST(read_file(out).find("unsafe: nodes[0] " + unknown +
                                   ": no sentinel knows a master named 'nosuch'") != std::string::npos,
               read_file(out));

    const auto first = "127.0.0.1:" + std::to_string(group.sentinel(0).port());
    BOOST_TEST(run_redlock("check --nodes redis-sentinel://" + first + "#mymaster", out) == 1,
               read_file(out));
    BOOST_TEST(read_file(out).find("warning: nodes[0] redis-sentinel://" + first +
                                   "#mymaster lists 1 sentinel(s)") != std::string::npos,
               read_file(out));

    const auto last = "127.0.0.1:" + std::to_string(group.sentinel(2).port());
    group.sentinel(2).kill9();
    BOOST_TEST(run_redlock("check --nodes " + group.uri(), out) == 1, read_file(out));
    report = read_file(out);
    BOOST_TEST(report.find("warning: " + voter + ": sentinel " + last) != std::string::npos, report);
    BOOST_TEST(report.find("the client asks the others") != std::string::npos, report);
    BOOST_TEST(report.find("unsafe: ") == std::string::npos, report);
}

// Sentinels with a password of their own (and a user of their own: the default user is off): the
// URI's credentials are the master's, so `check` logs in to the sentinels with the node object's
// sentinel_username and sentinel_password; without them every sentinel refuses it (NOAUTH) and
// the voter goes unchecked.
BOOST_AUTO_TEST_CASE(check_logs_in_to_the_sentinels_with_the_node_objects_credentials) {
    redlock::test::redis_sentinel_group group;
    const auto voter = "nodes[0] redis-sentinel://" + group.sentinel_addresses() + "#mymaster";
    // The sentinels log in to each other as "watcher" too: they keep seeing each other, and
    // SENTINEL CKQUORUM stays OK.
    const std::vector<std::vector<std::string>> commands = {
        {"ACL", "SETUSER", "watcher", "on", ">sentinel-pw", "+@all", "~*", "&*"},
        {"SENTINEL", "CONFIG", "SET", "sentinel-user", "watcher"},
        {"SENTINEL", "CONFIG", "SET", "sentinel-pass", "sentinel-pw"}};
    for (const auto& command : commands) {
        for (std::size_t i = 0; i < group.sentinels(); ++i) {
            const auto ok = group.sentinel(i).command(command);
            BOOST_TEST_REQUIRE(ok.str == "OK", redlock::resp::to_string(ok));
        }
    }
    for (std::size_t i = 0; i < group.sentinels(); ++i) {
        const auto ok = group.sentinel(i).command({"ACL", "SETUSER", "default", "off"});
        BOOST_TEST_REQUIRE(ok.str == "OK", redlock::resp::to_string(ok));
    }
    scratch_dir dir;
    const auto out = dir.file("out");
    const auto config = dir.file("config.json");
    std::ofstream(config) << R"({"nodes": [{"uri": ")" << group.uri()
                          << R"(", "sentinel_username": "watcher", "sentinel_password": "sentinel-pw"}]})";
    BOOST_TEST(run_redlock("check --config " + config, out) == 0, read_file(out));
    auto report = read_file(out);
    BOOST_TEST(
        report.find("info: " + voter + ": down-after-milliseconds 2000 is shorter than max_ttl 60000 ms") !=
            std::string::npos,
        report);
    BOOST_TEST(report.find("NOAUTH") == std::string::npos, report);
    BOOST_TEST(report.find("warning: ") == std::string::npos, report);
    BOOST_TEST(report.find("unsafe: ") == std::string::npos, report);

    BOOST_TEST(run_redlock("check --nodes " + group.uri(), out) == 3, read_file(out));
    report = read_file(out);
    BOOST_TEST(report.find("unchecked: " + voter + " did not answer (") != std::string::npos, report);
    BOOST_TEST(report.find("NOAUTH") != std::string::npos, report);
}

BOOST_AUTO_TEST_SUITE_END()
