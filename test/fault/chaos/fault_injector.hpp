#ifndef REDLOCK_TEST_FAULT_CHAOS_FAULT_INJECTOR_HPP
#define REDLOCK_TEST_FAULT_CHAOS_FAULT_INJECTOR_HPP

#include "support/redis_server.hpp"
#include "support/tcp_proxy.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <sys/types.h>

namespace redlock::chaos {

/// Draws faults from a seed and injects them into one schedule's servers, proxies and worker
/// processes, each with the time it heals at:
/// - network, per worker-node pair and direction (its proxy): latency with jitter, blackhole,
///   drop replies, drop requests, reset, 1-byte writes, a reply or request cut after N bytes,
///   requests held and delivered later (the connection given up meanwhile, or not), and a
///   partition of one worker from two or three nodes;
/// - processes: SIGSTOP of a server, kill -9 and restart (the AOF servers keep their data, the
///   others lose it), SIGSTOP of a worker past the longest ttl, SCRIPT FLUSH, CLIENT KILL.
/// At most two servers of a deployment are paused or down at once. Not thread-safe: one thread
/// drives it.
class fault_injector {
public:
    using clock = std::chrono::steady_clock;

    /// proxies[w][n]: worker w's proxy to server n. deployment[n]: the Redlock deployment server
    /// n belongs to; persistent[n]: whether it keeps its data over a kill -9 (AOF always).
    fault_injector(std::uint64_t seed, std::vector<std::unique_ptr<test::redis_server>>& servers,
                   std::vector<std::size_t> deployment, std::vector<bool> persistent,
                   std::vector<std::vector<std::unique_ptr<test::tcp_proxy>>>& proxies,
                   std::vector<pid_t> workers);

    /// Injects one new fault, drawn from the seed.
    void inject();
    /// Heals the faults whose time has come.
    void heal_due();
    /// Heals everything now (restarts the servers that are down, resumes what is paused).
    void heal_all();
    /// How long to wait before the next fault (a draw from the seed).
    [[nodiscard]] std::chrono::milliseconds next_gap();

    [[nodiscard]] const std::map<std::string, std::uint64_t>& injected() const noexcept { return injected_; }
    /// Every fault and heal as a JSON line {"at": steady ns, "fault": kind, "target": ...}.
    [[nodiscard]] const std::vector<std::string>& log() const noexcept { return log_; }
    /// When a server last came back from a restart: its votes wait out the client's quarantine.
    [[nodiscard]] clock::time_point last_restart() const noexcept { return last_restart_; }

private:
    struct pending_heal {
        clock::time_point at;
        std::function<void()> heal;
    };

    [[nodiscard]] int uniform(int lo, int hi);                         // inclusive
    [[nodiscard]] std::size_t below(std::size_t n);                    // in [0, n), n > 0
    [[nodiscard]] std::vector<std::size_t> available_servers() const;  // neither paused nor down
    [[nodiscard]] std::size_t out_in_deployment(std::size_t d) const;  // paused or down
    [[nodiscard]] std::chrono::milliseconds heal_after();
    void later(std::chrono::milliseconds after, std::function<void()> heal);
    // Counts a fault and logs it with its target ("node 3", "worker 1 -> node 2").
    void count(const std::string& kind, const std::string& target);
    void note(const std::string& event, const std::string& target);
    [[nodiscard]] std::string node_name(std::size_t n) const;

    void network_fault();
    void partition();
    void server_fault();
    void worker_pause();
    void server_command(const std::vector<std::string>& command, const std::string& kind);

    std::mt19937_64 rng_;
    std::vector<std::unique_ptr<test::redis_server>>& servers_;
    std::vector<std::size_t> deployment_;
    std::vector<bool> persistent_;
    std::vector<std::vector<std::unique_ptr<test::tcp_proxy>>>& proxies_;
    std::vector<pid_t> workers_;
    std::vector<pending_heal> pending_;
    std::set<std::size_t> servers_out_;  // paused or down
    std::set<std::size_t> workers_paused_;
    std::map<std::string, std::uint64_t> injected_;
    std::vector<std::string> log_;
    clock::time_point last_restart_{};
};

}  // namespace redlock::chaos

#endif
