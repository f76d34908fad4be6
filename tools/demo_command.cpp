// SPDX-License-Identifier: BSL-1.0
// redlock demo: what scripts/demo shows, from the installed command. With no --nodes it starts
// 5 redis-servers of its own, runs 2 worker processes of 4 coroutines each on one resource,
// kills 2 of the servers (grants go on with 3), then a third (every attempt fails with
// quorum_unreachable and names the dead nodes), and stops everything it started, by PID.
// With --cluster: a 3-master cluster of its own instead, whose master of the lock's slot it
// kills; grants fail until a replica takes over, then go on.
#include "cli_args.hpp"
#include "commands.hpp"
#include "local_cluster.hpp"
#include "local_servers.hpp"
#include "lock_demo_workers.hpp"

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <limits.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace redlock::cli {

namespace {

using namespace std::chrono_literals;

constexpr const char* demo_footer =
    "Two processes of --workers coroutines contend for one resource; every grant prints the\n"
    "worker, the validity left and one letter per node (G granted, D denied, X failed, . not\n"
    "needed). Without --nodes it starts 5 local redis-servers (redis-server must be installed),\n"
    "kills 2 of them after --seconds (grants go on with 3 of 5), then a third (no quorum), and\n"
    "stops them. With --nodes it uses those nodes, kills nothing, and runs 3 x --seconds + 1.\n"
    "With --cluster it starts a Redis Cluster of 3 masters and 3 replicas (redis-cli must be\n"
    "installed too; cluster-node-timeout 2 s), kills the master of the lock's slot after\n"
    "--seconds, and shows the grants fail until its replica takes over, then go on.\n"
    "Each process ends with its totals and a line per node (votes, timeouts, errors, last\n"
    "error); --json prints its client's metrics as one JSON line instead.\n";

std::atomic<int> interrupted{0};

extern "C" void on_interrupt(int sig) {
    interrupted.store(sig);
}

// Sleeps `d`, or less if interrupted; false if interrupted.
bool pause_for(std::chrono::milliseconds d) {
    const auto until = std::chrono::steady_clock::now() + d;
    while (std::chrono::steady_clock::now() < until) {
        if (interrupted.load() != 0) return false;
        std::this_thread::sleep_for(20ms);
    }
    return interrupted.load() == 0;
}

std::string self_path() {
    char buf[PATH_MAX];
    const auto n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0) throw std::runtime_error("cannot find the redlock executable (/proc/self/exe)");
    return std::string(buf, static_cast<std::size_t>(n));
}

pid_t spawn_worker(const std::string& self, const std::vector<std::string>& nodes, const std::string& name,
                   int workers, int seconds, bool quarantine, bool json) {
    std::string joined;
    for (const auto& n : nodes)
        joined += (joined.empty() ? "" : ",") + n;
    std::vector<std::string> args = {self,
                                     "demo",
                                     "--worker",
                                     "--nodes",
                                     joined,
                                     "--name",
                                     name,
                                     "--workers",
                                     std::to_string(workers),
                                     "--seconds",
                                     std::to_string(seconds),
                                     "--restart-quarantine",
                                     quarantine ? "on" : "off"};
    if (json) args.emplace_back("--json");
    std::vector<char*> argv;
    for (auto& a : args)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = -1;
    if (const int rc = ::posix_spawn(&pid, self.c_str(), nullptr, nullptr, argv.data(), environ); rc != 0) {
        throw std::runtime_error("cannot start a demo worker: " + std::string(std::strerror(rc)));
    }
    return pid;
}

// The flags of `redlock demo`, and those of the worker processes it starts (`redlock demo
// --worker ...`, spawn_worker), hidden from --help.
struct demo_settings {
    std::string nodes;  // as given: the demo splits it at every comma, a worker as a node list
    bool cluster = false;
    std::optional<int> workers;  // default: 4 coroutines, as lock_demo's
    std::optional<int> seconds;  // default: 3 s per phase; a worker: lock_demo's
    bool json = false;
    bool worker = false;
    std::optional<std::string> name;
    std::optional<std::string> restart_quarantine;
};

int worker_main(const demo_settings& d) {
    lock_demo::settings s;
    s.nodes = split_node_list(d.nodes);
    s.name = d.name.value_or(s.name);
    s.workers = d.workers.value_or(s.workers);
    s.seconds = d.seconds.value_or(s.seconds);
    // Checked here: CLI11 names no hidden option in its errors.
    const auto quarantine = d.restart_quarantine.value_or("on");
    if (quarantine != "on" && quarantine != "off")
        throw usage_error("--restart-quarantine: \"" + quarantine + "\" is neither on nor off");
    s.restart_quarantine = quarantine == "on";
    s.json = d.json;
    if (s.nodes.empty()) throw usage_error("--worker needs --nodes");
    return lock_demo::run(s);
}

// Kills the master of the demo lock's slot and tells when a replica has taken over.
void fail_over(local_cluster& cluster) {
    // A key of the lock's slot (its hash tag), not the lock itself.
    const std::string probe = "{redlock:" + lock_demo::settings{}.resource + "}:demo-probe";
    const auto owner = cluster.owner_of(probe);
    if (!owner) {
        std::printf("===== redlock demo: no master serves the lock's slot; nothing to kill =====\n");
        return;
    }
    std::printf("===== redlock demo: killing %s (pid %d), the master of the lock's slot =====\n",
                cluster.address(*owner).c_str(), static_cast<int>(cluster.pid(*owner)));
    std::fflush(stdout);
    cluster.kill(*owner);
    const auto killed = std::chrono::steady_clock::now();
    while (pause_for(200ms) && std::chrono::steady_clock::now() - killed < 20s) {
        const auto promoted = cluster.owner_of(probe);
        if (!promoted) continue;
        std::printf(
            "===== %s, its replica, took over %.1f s after the kill (cluster-node-timeout 2 s): "
            "grants go on =====\n",
            cluster.address(*promoted).c_str(),
            std::chrono::duration<double>(std::chrono::steady_clock::now() - killed).count());
        std::printf(
            "===== (the restart quarantine is off for servers started a moment ago; on, the "
            "promoted master would not grant for max_ttl) =====\n");
        std::fflush(stdout);
        return;
    }
}

int demo_command(const demo_settings& d) {
    if (d.worker) return worker_main(d);
    if (d.name || d.restart_quarantine)
        throw usage_error("--name and --restart-quarantine: only for the demo's own workers (--worker)");
    const std::vector<std::string> given_nodes = split_list(d.nodes);
    const bool cluster = d.cluster;
    const int workers = d.workers.value_or(4);
    const int phase = d.seconds.value_or(3);
    const bool json = d.json;
    if (cluster && !given_nodes.empty())
        throw usage_error("--cluster starts a cluster of its own; give --nodes or --cluster");

    struct sigaction sa {};
    sa.sa_handler = on_interrupt;
    ::sigaction(SIGINT, &sa, nullptr);
    ::sigaction(SIGTERM, &sa, nullptr);

    std::optional<local_servers> servers;
    std::optional<local_cluster> cluster_servers;
    std::vector<std::string> nodes = given_nodes;
    if (cluster) {
        cluster_servers.emplace(std::chrono::milliseconds(2000));
        nodes = {cluster_servers->uri()};
    } else if (nodes.empty()) {
        servers.emplace(5);
        nodes = servers->uris();
    }
    std::printf("redlock demo: %zu nodes:", nodes.size());
    for (const auto& n : nodes)
        std::printf(" %s", n.c_str());
    std::printf(
        "\nredlock demo: one letter per node: G granted, D denied, X failed, . not needed or no answer "
        "yet\n");
    std::fflush(stdout);

    const auto self = self_path();
    std::vector<pid_t> pids;
    // Servers we started a moment ago lost no lock: no restart quarantine for them.
    const bool own_servers = servers || cluster_servers;
    const int run_seconds = cluster ? 3 * phase + 4 : 3 * phase + 1;
    for (const char* name : {"A", "B"})
        pids.push_back(spawn_worker(self, nodes, name, workers, run_seconds, !own_servers, json));

    const auto phase_ms = std::chrono::milliseconds(phase * 1000);
    if (cluster_servers && pause_for(phase_ms)) fail_over(*cluster_servers);
    if (servers && pause_for(phase_ms)) {
        for (std::size_t i : {0u, 1u}) {
            std::printf("===== redlock demo: killing node %zu (%s, pid %d) =====\n", i + 1, nodes[i].c_str(),
                        static_cast<int>(servers->pid(i)));
            std::fflush(stdout);
            servers->kill(i);
        }
        std::printf("===== 3 of 5 nodes left: still a quorum =====\n");
        std::fflush(stdout);
        if (pause_for(phase_ms)) {
            std::printf("===== redlock demo: killing node 3 (%s, pid %d) =====\n", nodes[2].c_str(),
                        static_cast<int>(servers->pid(2)));
            servers->kill(2);
            std::printf("===== 2 of 5 nodes left: no quorum, acquire fails with quorum_unreachable =====\n");
            std::fflush(stdout);
        }
    }
    int status = 0;
    for (auto pid : pids) {
        int st = 0;
        while (true) {
            const pid_t r = ::waitpid(pid, &st, WNOHANG);
            if (r == pid) break;
            if (interrupted.load() != 0) ::kill(pid, SIGTERM);
            std::this_thread::sleep_for(20ms);
        }
        const int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        if (code != 0 && status == 0) status = code;
    }
    if (interrupted.load() != 0) status = 128 + interrupted.load();
    return status;  // `servers` stops its redis-servers by PID
}

}  // namespace

subcommand add_demo_command(CLI::App& redlock) {
    auto* demo = add_command(
        redlock, "demo", "Redlock at work on local servers, with nodes killed under it",
        "redlock demo [--nodes URI,... | --cluster] [--workers 4] [--seconds 3] [--json]", demo_footer);
    auto d = std::make_shared<demo_settings>();
    demo->add_option("--nodes", d->nodes, "the nodes to use, instead of 5 local redis-servers")
        ->type_name("URI,...");
    add_switch(*demo, "--cluster", d->cluster, "a Redis Cluster of its own (3 masters, 3 replicas)");
    // A worker runs for the whole demo, 3 x --seconds + 4: its bounds are wider.
    auto* worker = add_switch(*demo, "--worker", d->worker, "")->group("");
    const auto in_bounds = [worker](int demo_max, int worker_max) {
        return [=](const std::string& text) {
            CLI::Range bounds(1, worker->count() > 0 ? worker_max : demo_max);
            auto checked = text;
            return bounds(checked);
        };
    };
    demo->add_option("--workers", d->workers, "coroutines per process (default 4)")
        ->check(in_bounds(100, 1000), "INT in [1 - 100]")
        ->type_name("N");
    demo->add_option("--seconds", d->seconds, "how long each phase lasts (default 3)")
        ->check(in_bounds(600, 3600), "INT in [1 - 600]")
        ->type_name("N");
    add_switch(*demo, "--json", d->json, "each process prints its client's metrics as one JSON line");
    demo->add_option("--name", d->name, "")->group("");
    demo->add_option("--restart-quarantine", d->restart_quarantine, "")->group("");
    return {demo, [d] { return demo_command(*d); }};
}

}  // namespace redlock::cli
