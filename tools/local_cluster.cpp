// SPDX-License-Identifier: BSL-1.0
#include "local_cluster.hpp"

#include <csignal>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace redlock::cli {

namespace {

using namespace std::chrono_literals;

constexpr std::size_t servers_in_cluster = 6;  // 3 masters, 1 replica each

std::vector<std::string> cluster_args(std::chrono::milliseconds node_timeout) {
    return {"--cluster-enabled", "yes", "--cluster-node-timeout", std::to_string(node_timeout.count()),
            // A replica's first sync waits 5 s by default: it could not take over before.
            "--repl-diskless-sync-delay", "0"};
}

}  // namespace

local_cluster::local_cluster(std::chrono::milliseconds node_timeout)
    : servers_(servers_in_cluster, cluster_args(node_timeout)) {
    create();
    wait_until_ok();
}

std::string local_cluster::address(std::size_t i) const {
    return "127.0.0.1:" + std::to_string(servers_.port(i));
}

std::string local_cluster::uri() const {
    std::string out = "redis-cluster://";
    for (std::size_t i = 0; i < servers_.size(); ++i) {
        if (i > 0) out += ',';
        out += address(i);
    }
    return out;
}

void local_cluster::create() {
    std::vector<std::string> args = {"redis-cli", "--cluster", "create"};
    for (std::size_t i = 0; i < servers_.size(); ++i)
        args.push_back(address(i));
    for (const char* a : {"--cluster-replicas", "1", "--cluster-yes"})
        args.emplace_back(a);
    std::vector<char*> argv;
    for (auto& a : args)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    const auto log = servers_.dir() + "/create.log";
    posix_spawn_file_actions_t files;
    posix_spawn_file_actions_init(&files);
    posix_spawn_file_actions_addopen(&files, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&files, STDOUT_FILENO, STDERR_FILENO);
    pid_t pid = -1;
    const int rc = ::posix_spawnp(&pid, "redis-cli", &files, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&files);
    if (rc != 0) throw std::runtime_error("cannot run redis-cli: " + std::string(std::strerror(rc)));
    int status = 0;
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    while (::waitpid(pid, &status, WNOHANG) != pid) {
        if (std::chrono::steady_clock::now() > deadline) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, &status, 0);
            break;
        }
        std::this_thread::sleep_for(20ms);
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        std::ifstream in(log);
        std::stringstream text;
        text << in.rdbuf();
        throw std::runtime_error("redis-cli --cluster create failed:\n" + text.str());
    }
}

void local_cluster::wait_until_ok() {
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    std::string last;
    while (std::chrono::steady_clock::now() < deadline) {
        std::size_t ok = 0;
        for (std::size_t i = 0; i < servers_.size(); ++i) {
            last = servers_.command(i, "CLUSTER INFO");
            if (last.find("cluster_state:ok") != std::string::npos) ++ok;
        }
        if (ok == servers_.size()) return;
        std::this_thread::sleep_for(100ms);
    }
    throw std::runtime_error(
        "the local cluster did not reach cluster_state:ok in 20 s; last CLUSTER INFO:\n" + last);
}

std::optional<std::size_t> local_cluster::owner_of(const std::string& key) const {
    for (std::size_t i = 0; i < servers_.size(); ++i) {
        if (servers_.pid(i) <= 0) continue;
        // A replica or another master answers -MOVED; the owner writes it (for a second).
        if (servers_.command(i, "SET " + key + " probe PX 1000").starts_with("+OK")) return i;
    }
    return std::nullopt;
}

}  // namespace redlock::cli
