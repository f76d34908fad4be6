// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_TEST_FAULT_CHAOS_FAULT_INJECTOR_HPP
#define REDLOCK_TEST_FAULT_CHAOS_FAULT_INJECTOR_HPP

#include "fault/chaos/fault_schedule.hpp"
#include "support/redis_server.hpp"
#include "support/tcp_proxy.hpp"

#include <chrono>
#include <cstdint>
#include <memory>
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
/// At most two servers of a deployment are paused or down at once, but twice per schedule every
/// server without AOF of a deployment is restarted at once, while a worker sleeps: a quorum that
/// forgot every grant, beside the two AOF servers that keep them (what the restart quarantine is
/// for).
class fault_injector final : public fault_schedule {
public:
    /// proxies[w][n]: worker w's proxy to server n. deployment[n]: the Redlock deployment server
    /// n belongs to; persistent[n]: whether it keeps its data over a kill -9 (AOF always).
    fault_injector(std::uint64_t seed, std::vector<std::unique_ptr<test::redis_server>>& servers,
                   std::vector<std::size_t> deployment, std::vector<bool> persistent,
                   std::vector<std::vector<std::unique_ptr<test::tcp_proxy>>>& proxies,
                   std::vector<pid_t> workers);

    void inject() override;
    void heal_all() override;

private:
    [[nodiscard]] std::vector<std::size_t> available_servers() const;  // neither paused nor down
    [[nodiscard]] std::size_t out_in_deployment(std::size_t d) const;  // paused or down
    [[nodiscard]] std::chrono::milliseconds heal_after();
    [[nodiscard]] std::string node_name(std::size_t n) const;

    // 0: a paused worker, 1: a server without AOF restarted empty, 2 and 3: restart_quorum_empty().
    [[nodiscard]] bool inject_essential(std::size_t which) override;
    void network_fault();
    void partition();
    void server_fault();
    void restart(std::size_t n);  // kill -9, back within 500 ms
    // Every server without AOF of a deployment that has nothing out, if they are a quorum of it.
    [[nodiscard]] bool restart_quorum_empty();
    void server_command(const std::vector<std::string>& command, const std::string& kind);

    std::vector<std::unique_ptr<test::redis_server>>& servers_;
    std::vector<std::size_t> deployment_;
    std::vector<bool> persistent_;
    std::vector<std::vector<std::unique_ptr<test::tcp_proxy>>>& proxies_;
    std::set<std::size_t> servers_out_;  // paused or down
};

}  // namespace redlock::chaos

#endif
