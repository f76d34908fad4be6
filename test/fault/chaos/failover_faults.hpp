// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_TEST_FAULT_CHAOS_FAILOVER_FAULTS_HPP
#define REDLOCK_TEST_FAULT_CHAOS_FAILOVER_FAULTS_HPP

#include "fault/chaos/fault_schedule.hpp"
#include "support/redis_server.hpp"

#include <chrono>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace redlock::chaos {

/// A deployment whose servers fail over by themselves: a Redis Cluster (its masters and
/// replicas) or a master watched by Sentinel (its data servers, and the sentinels).
struct failover_group {
    std::string name;                            ///< "cluster 0", "sentinel group 1"
    std::vector<test::redis_server*> data;       ///< masters and replicas
    std::vector<test::redis_server*> sentinels;  ///< none for a cluster
    std::string sentinel_master_name;            ///< the master's name with the sentinels
    bool persistent = false;                     ///< AOF, fsync always: a kill -9 loses nothing
    /// cluster-node-timeout or down-after-milliseconds: a server paused for less goes
    /// unnoticed; one down for longer is failed over.
    std::chrono::milliseconds failure_detection{2000};
    /// Starts a coordinated failover of the group (CLUSTER FAILOVER on a replica, SENTINEL
    /// FAILOVER) without waiting for it: of `master` if given (a cluster's replica of it), else
    /// of any master; returns what it asked, or throws.
    std::function<std::string(std::mt19937_64&, const test::redis_server* master)> manual_failover;
    /// Why a coordinated failover must wait ("" when it need not; null: never). SENTINEL
    /// FAILOVER elects no leader: asked while another failover runs, or before every sentinel
    /// has the last one's epoch, it can make a second failover of the same epoch, and sentinels
    /// that name two masters of one epoch never agree again.
    std::function<std::string()> unsettled;
    /// Cuts (`cut`: true) or heals a network partition with `master` on its small side (the
    /// split brain): the master loses its replicas and the sentinels, or every other node of
    /// its cluster, and every worker still reaches every data server. With Sentinel the
    /// workers in `slots` are on the master's side: they lose the sentinels (a cluster's
    /// workers have no side: they reach every node). Throws if it cannot.
    std::function<void(test::redis_server& master, const std::vector<std::size_t>& slots, bool cut)>
        partition;
    /// Cuts (`cut`: true), once they have all it wrote, or heals the replication links of
    /// `master` alone: its replicas get nothing more from it, while the sentinels and the
    /// workers still reach it. Null for a cluster, whose coordinated CLUSTER FAILOVER needs the
    /// links (its replica catches up first).
    std::function<void(test::redis_server& master, bool cut)> cut_replication;
};

/// ROLE of a server: "master", "slave", or "" if it does not answer within half a second.
[[nodiscard]] std::string role_of(const test::redis_server& s);

/// Faults for failover groups, drawn from the seed (besides fault_schedule's worker pauses):
/// - a data server (master or replica) paused for less than failure_detection, or killed with
///   -9 and restarted either at once (no failover: a master comes back empty unless persistent,
///   the restart quarantine's case) or after failure_detection + 2 to 4 s (its replica was
///   promoted meanwhile: the failover quarantine's case); a replica of Sentinel comes back as a
///   replica, as the config file the sentinels rewrite would make it;
/// - a coordinated failover (manual_failover);
/// - with lose_grants, failovers that lose the grants of every master of the group without
///   persistence (whose locks wait for no replica): their lock keys are made ones their
///   replicas never got, as a partition from their replicas would leave them (with Sentinel,
///   whose switch takes a second or more, their replication is cut until it is over), then a
///   replica of each is promoted at once, while every worker but one is paused
///   (the failover quarantine's case: the old grants are lost while their holders count on
///   them; without the quarantine the promoted master grants them again at once);
/// - a split brain: a master cut for failure_detection + 4 to 6 s from its replicas and
///   sentinels (with every worker but one) or from the other nodes of its cluster, still
///   reached by every worker; a replica is promoted meanwhile. With Sentinel a master that
///   refuses to write without a replica is what keeps its side's holders from going on beside
///   the promoted master's grants; in a cluster, a master that cannot reach most masters
///   refuses every command (CLUSTERDOWN) after cluster-node-timeout, before the others fail it
///   over;
/// - a sentinel paused or killed and restarted;
/// - SCRIPT FLUSH or CLIENT KILL on a data server.
/// Between faults, observe() counts a promotion ("promotion") when it sees one, not when a
/// fault asked for it, and (with fresh_clients) restarts a worker as a fresh client right
/// after it ("worker_fresh_restart"): a process that never saw the master before the switch.
/// Every schedule has the faults essential_faults() names (each as soon after its set point as
/// its group allows). With lose_grants: the 4th fault loses the grants of the masters of the
/// group without persistence, the 16th restarts a master of that group
/// at once (late enough not to hide what the 4th did), the 20th pauses a worker, the 28th takes
/// a master down until a failover, the 40th asks for one. Without: the 5th restarts, the 12th
/// pauses a worker, the 28th takes a master down, the 40th asks for a failover. The 24th
/// splits the brain of the group without persistence.
/// At most one data server and one sentinel of a group are out at a time: every fault leaves
/// the group able to fail over. No network faults between workers and data servers: a
/// cluster's clients follow its MOVED replies, and a Sentinel's the addresses the sentinels
/// name, past any proxy; the split brain cuts the links it needs between the servers.
class failover_faults final : public fault_schedule {
public:
    /// lose_grants: whether failovers that lose grants are among the faults; fresh_clients:
    /// whether a worker restarts as a fresh client after each promotion.
    failover_faults(std::uint64_t seed, std::vector<failover_group> groups, std::vector<pid_t> workers,
                    bool lose_grants, bool fresh_clients);

    void inject() override;
    void observe() override;

private:
    enum class data_fault { pause, restart_at_once, down_until_failover };
    enum class essential {
        lose_grants,
        restart_master,
        worker_pause,
        split_brain,
        master_down,
        manual_failover
    };

    [[nodiscard]] bool inject_essential(std::size_t which) override;
    // Each returns whether the fault happened (false: its group was busy).
    bool data_server_fault(failover_group& g, bool master, data_fault fault);
    void sentinel_fault(failover_group& g);  // a data server's for a cluster
    /// Whether g may be failed over now; notes why not.
    bool settled(failover_group& g, const std::string& kind);
    bool manual_failover(failover_group& g, const test::redis_server* master = nullptr);
    bool unreplicated_failover(failover_group& g);
    // A master of the group (with Sentinel, and all workers but one) cut from the others
    // (failover_group::partition), healed failure_detection + 4 to 6 s later.
    bool split_brain(failover_group& g);
    // Makes every lock key of `master` one that its replicas never got; returns them.
    [[nodiscard]] std::vector<std::string> unreplicate_locks(const test::redis_server& master);
    // The group's masters: the one its sentinels name, or a cluster's (none in the middle of a
    // failover).
    [[nodiscard]] std::vector<test::redis_server*> masters_of(failover_group& g);
    void server_command(failover_group& g, const std::vector<std::string>& command, const std::string& kind);
    // Pauses or kills `s`, and resumes or restarts it (then calls after_restart) back_after later.
    void take_out(test::redis_server* s, bool kill, std::chrono::milliseconds back_after,
                  const std::string& kind, const std::string& target,
                  std::function<void()> after_restart = {});
    [[nodiscard]] bool any_out(const std::vector<test::redis_server*>& of) const;
    // The port of the master the group's sentinels name (the first that answers), 0 if none.
    [[nodiscard]] unsigned short named_master(const failover_group& g) const;
    [[nodiscard]] std::string server_name(const failover_group& g, const test::redis_server& s) const;

    std::vector<failover_group> groups_;
    std::vector<std::uint64_t> essential_at_;  // the injection each is due at
    std::vector<essential> essentials_;
    bool lose_grants_;
    bool fresh_clients_;
    std::set<test::redis_server*> out_;  // paused or down
    // What observe() saw last: each data server's role ("master", "slave"), each group's
    // master as its sentinels name it (0: not known yet).
    std::map<const test::redis_server*, std::string> last_role_;
    std::vector<unsigned short> last_named_master_;
    clock::time_point next_look_{};
};

}  // namespace redlock::chaos

#endif
