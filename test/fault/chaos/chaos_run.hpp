// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_TEST_FAULT_CHAOS_CHAOS_RUN_HPP
#define REDLOCK_TEST_FAULT_CHAOS_CHAOS_RUN_HPP

#include "fault/chaos/chaos_deployment.hpp"
#include "fault/chaos/history_checker.hpp"

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace redlock::chaos {

struct schedule_options {
    std::uint64_t seed = 1;
    chaos::topology topology = chaos::topology::masters;
    int seconds = 20;    ///< how long the workers work and the faults come
    int workers = 3;     ///< client processes
    int coroutines = 6;  ///< per worker
    int resources = 2;   ///< per kind of lock (lock_kinds.hpp)
    bool faults = true;  ///< false: the workload alone
    /// The negative control: on independent masters, workers hold on any one node's grant;
    /// on a cluster or Sentinel, their failover quarantine is off.
    bool broken = false;
    /// Workers hand leases of every kind over to each other (chaos_worker --hand-overs), except
    /// in the negative controls.
    bool hand_overs = true;
    /// Sentinel: masters refuse writes without a replica (make_deployment). False is the split
    /// brain's negative control.
    bool min_replicas_to_write = true;
    /// The workers' restart quarantine (client_config::restart_quarantine). False is its
    /// negative control on the masters topology, whose servers restart empty.
    bool restart_quarantine = true;
    std::string worker_path;  ///< the chaos_worker executable
};

struct schedule_result {
    std::uint64_t seed = 0;
    chaos::topology topology = chaos::topology::masters;
    double seconds = 0;
    std::map<std::string, std::uint64_t> faults;  ///< injected, by kind
    std::uint64_t holds = 0;
    std::uint64_t holds_lost = 0;
    std::uint64_t holds_judged = 0;                      ///< holds with a non-empty interval (judged_holds)
    std::map<std::string, std::uint64_t> holds_by_kind;  ///< by lock_kinds name (read_write: both modes)
    std::uint64_t acquire_failures = 0;
    std::uint64_t writes = 0;
    std::uint64_t writes_refused = 0;  ///< stale fences the store turned away
    std::uint64_t reentries = 0;
    std::uint64_t watchdog_renewals = 0;
    std::uint64_t extends = 0;    ///< the scopes' own
    std::uint64_t handovers = 0;  ///< leases written out for another worker
    std::uint64_t adoptions = 0;  ///< of them, adopted by another worker
    std::uint64_t bad_lines = 0;
    std::vector<std::string> fault_log;  ///< every fault and heal, a JSON line each (with its time)
    std::vector<violation> violations;
};

/// One randomized schedule: the deployments of `topology` (chaos_deployment.hpp; for `masters`,
/// two Redlock deployments of five fresh redis-servers each, the plain one for unfenced locks:
/// three without persistence, two with AOF and fsync always; the fenced one: all five with AOF,
/// fsync always; a TCP proxy for every worker-node pair) and a store server, `workers`
/// chaos_worker processes, and faults drawn from the seed until the time is up; then everything
/// heals, the workers finish, every resource must be acquirable again within max_ttl and no
/// key of ours may be left, and the history is checked. A worker the faults restart
/// (fault_schedule::worker_restart) is killed and a fresh one, with a history of its own,
/// works in its place for the rest of the schedule. Every process it started is stopped,
/// by PID, before it returns. Throws std::runtime_error if the set-up itself fails.
/// With REDLOCK_CHAOS_KEEP=DIR set, the histories and worker logs are copied to DIR/seed-<seed>.
[[nodiscard]] schedule_result run_schedule(const schedule_options& options);

/// Prints the violations with the seed and their evidence (one JSON line per record), the
/// first five of each rule, each with the faults of the max_ttl before its records.
void print_violations(const schedule_result& r, std::FILE* out);

}  // namespace redlock::chaos

#endif
