// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_TEST_FAULT_CHAOS_CHAOS_DEPLOYMENT_HPP
#define REDLOCK_TEST_FAULT_CHAOS_CHAOS_DEPLOYMENT_HPP

#include "fault/chaos/fault_schedule.hpp"
#include "support/redis_server.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <sys/types.h>

namespace redlock::chaos {

/// What the workers lock on. `masters`: two Redlock deployments of five independent masters,
/// each reached through a fault-injecting proxy per worker. `cluster`: two Redis Clusters of
/// three masters with a replica each, one voter each (N = 1). `sentinel`: two masters, each
/// with two replicas and three sentinels, one voter each, the sentinels reached through a proxy
/// per worker (a partition can cut them off).
enum class topology { masters, cluster, sentinel };

[[nodiscard]] std::string_view to_string(topology t) noexcept;
[[nodiscard]] std::optional<topology> parse_topology(std::string_view name) noexcept;
/// The faults (fault_schedule::injected() kinds) a topology's safety claims rest on: masters
/// restarted empty (the restart quarantine), failovers asked for and promotions seen,
/// failovers that lose grants and workers started fresh after them (the failover quarantine,
/// and WAIT for fences), paused workers (validity and fences). A run without them
/// passes nothing.
[[nodiscard]] std::vector<std::string> essential_faults(topology t);

/// The servers of one schedule and the faults that fit them. Each topology has a deployment
/// for the unfenced kinds of lock (lock_kinds.hpp), whose servers lose their data when they are
/// killed, and one for the fenced kinds, whose servers keep it (AOF, fsync always: fences need
/// counters that survive a restart, docs/safety.md). Every process it started is stopped, by
/// PID, when it is destroyed.
class chaos_deployment {
public:
    virtual ~chaos_deployment() = default;

    /// The nodes worker w's client uses for the unfenced kinds, or for the fenced ones; by
    /// default direct_nodes(), the same for every worker.
    [[nodiscard]] virtual std::vector<std::string> worker_nodes(std::size_t w, bool fenced) const {
        (void)w;
        return direct_nodes(fenced);
    }
    /// The same nodes, reached without a proxy: the harness's own check after the faults.
    [[nodiscard]] virtual std::vector<std::string> direct_nodes(bool fenced) const = 0;
    /// lock_options::replicas of the fenced kinds: where a failover can promote a replica, a
    /// fence's increment must have reached one (docs/deployments.md).
    [[nodiscard]] virtual int fenced_replicas() const noexcept { return 0; }
    /// The faults of one schedule, against these servers and the workers' processes.
    [[nodiscard]] virtual std::unique_ptr<fault_schedule> faults(std::uint64_t seed,
                                                                 std::vector<pid_t> workers) = 0;
    /// After the faults healed: waits until the deployment serves every lock again.
    virtual void settle() {}
    /// The servers that hold the locks' keys now (the masters).
    [[nodiscard]] virtual std::vector<const test::redis_server*> key_servers() = 0;
};

/// A data server's options: `persistent`, AOF with fsync always (a kill -9 loses nothing);
/// else no persistence at all (a kill -9 loses everything).
[[nodiscard]] test::redis_server_options data_server_options(bool persistent);

/// Starts the servers of `t` for `workers` worker processes. `min_replicas_to_write` (Sentinel
/// only): whether a master refuses writes without a replica (min-replicas-to-write 1,
/// min-replicas-max-lag 1: what keeps a split brain's old master from granting; false is its
/// negative control). Throws std::runtime_error if they cannot be started.
[[nodiscard]] std::unique_ptr<chaos_deployment> make_deployment(topology t, int workers,
                                                                bool min_replicas_to_write = true);

// One per topology (masters_deployment.cpp, failover_deployments.cpp).
[[nodiscard]] std::unique_ptr<chaos_deployment> make_masters_deployment(int workers);
[[nodiscard]] std::unique_ptr<chaos_deployment> make_cluster_deployment();
[[nodiscard]] std::unique_ptr<chaos_deployment> make_sentinel_deployment(int workers,
                                                                         bool min_replicas_to_write);

}  // namespace redlock::chaos

#endif
