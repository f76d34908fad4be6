// SPDX-License-Identifier: BSL-1.0
// The bounded chaos run of scripts/test: randomized fault schedules against five real servers
// and three worker processes, fixed seeds plus one random seed (printed), each checked for
// mutual exclusion, fence order and recovery; one schedule on a cluster and one on Sentinel;
// and the negative controls, whose broken workers (a quorum of 1; without the restart
// quarantine; on a cluster and with Sentinel, without the failover quarantine) and Sentinel
// masters that write without a replica (a split brain) the same checker must catch.
#include "fault/chaos/chaos_run.hpp"
#include "fault/chaos/lock_kinds.hpp"

#include <boost/test/unit_test.hpp>

#include <random>

namespace chaos = redlock::chaos;

namespace {

chaos::schedule_options schedule(std::uint64_t seed, int seconds,
                                 chaos::topology topology = chaos::topology::masters) {
    chaos::schedule_options o;
    o.seed = seed;
    o.topology = topology;
    o.seconds = seconds;
    o.worker_path = REDLOCK_CHAOS_WORKER_PATH;
    return o;
}

// A negative control's schedule: one resource of each kind and 16 coroutines per worker, so
// that more rivals wait for each lock and the one worker left running tries more of them at once.
chaos::schedule_options control_schedule(chaos::topology topology = chaos::topology::masters) {
    auto o = schedule(1, 20, topology);
    o.resources = 1;
    o.coroutines = 16;
    return o;
}

// Every schedule injects the topology's essential faults (a node restarted empty, a paused
// worker, failovers) at set points, whatever its seed: the run must have done them.
void run_and_expect_no_violation(std::uint64_t seed, chaos::topology topology = chaos::topology::masters,
                                 int seconds = 20) {
    const auto r = chaos::run_schedule(schedule(seed, seconds, topology));
    chaos::print_violations(r, stdout);
    std::uint64_t injected = 0;
    for (const auto& [kind, n] : r.faults)
        injected += n;
    BOOST_TEST_MESSAGE(chaos::to_string(topology)
                       << " seed " << seed << ": " << injected << " faults, " << r.holds << " holds ("
                       << r.holds_lost << " lost), " << r.acquire_failures << " failed acquires, " << r.writes
                       << " writes (" << r.writes_refused << " stale refused), " << r.reentries
                       << " re-entries, " << r.watchdog_renewals << " renewals, " << r.extends << " extends, "
                       << r.handovers << " hand-overs (" << r.adoptions << " adopted), "
                       << r.violations.size() << " violations");
    for (const auto& [kind, n] : r.faults)
        BOOST_TEST_MESSAGE("  " << kind << ": " << n);
    BOOST_TEST(r.violations.empty(), "seed " << seed << ": " << r.violations.size() << " violations");
    // The run did something worth checking: faults of several kinds, and locks held through them.
    BOOST_TEST(injected >= 20u);
    BOOST_TEST(r.faults.size() >= 6u);
    BOOST_TEST(r.holds >= 50u);
    BOOST_TEST(r.holds_judged >= 50u);
    BOOST_TEST(r.writes >= 50u);
    BOOST_TEST(r.bad_lines == 0u);
    // Leases handed from one worker to another, each adopter the only holder from then on. On
    // the failover topologies a schedule's few holds give only a few.
    if (topology == chaos::topology::masters) BOOST_TEST(r.adoptions >= 5u);
    // Every kind of lock did its part, not only all of them together: on independent masters
    // each kind many times, with its re-entries and stale writes refused; on the failover
    // topologies, whose schedules hold far less (a Sentinel schedule of 20 s held the unfenced
    // kinds 12 times, through its failovers and split brain), the unfenced and the fenced kinds.
    std::uint64_t unfenced = 0;
    std::uint64_t fenced = 0;
    for (const auto& kind : chaos::lock_kinds) {
        const auto n =
            r.holds_by_kind.contains(std::string(kind.name)) ? r.holds_by_kind.at(std::string(kind.name)) : 0;
        BOOST_TEST_MESSAGE("  holds of " << kind.name << ": " << n);
        (kind.fenced ? fenced : unfenced) += n;
        if (topology == chaos::topology::masters) BOOST_TEST(n >= 10u, kind.name << ": " << n << " holds");
    }
    BOOST_TEST(unfenced >= 5u);
    BOOST_TEST(fenced >= 5u);
    if (topology == chaos::topology::masters) {
        BOOST_TEST(r.reentries >= 10u);
        BOOST_TEST(r.writes_refused >= 1u);
    }
    for (const auto& kind : chaos::essential_faults(topology))
        BOOST_TEST((r.faults.contains(kind) && r.faults.at(kind) >= 1u), "seed " << seed << ": no " << kind);
}

// Holds the checker found beside another (a writer beside anyone, more than a semaphore's
// bound): what the failover topologies' negative controls must show.
std::size_t second_holders(const chaos::schedule_result& r) {
    std::size_t n = 0;
    for (const auto& v : r.violations)
        n += v.rule == "mutual_exclusion" || v.rule == "permits_exceeded" ? 1 : 0;
    return n;
}

std::uint64_t injected(const chaos::schedule_result& r, const std::string& kind) {
    return r.faults.contains(kind) ? r.faults.at(kind) : 0;
}

// What a negative control found over the seeds it ran: second holders, and the faults of the
// kind that should let them in.
struct control_outcome {
    std::size_t second_holders = 0;
    std::uint64_t faults = 0;
};

// Runs the negative control `o` with seeds 1 to 4, until one shows second holders: a schedule
// can miss them by chance (a loaded machine, the one worker left running holding the keys).
control_outcome run_control(chaos::schedule_options o, const std::string& fault, const std::string& label) {
    control_outcome total;
    for (std::uint64_t seed = 1; seed <= 4 && total.second_holders == 0; ++seed) {
        o.seed = seed;
        const auto r = chaos::run_schedule(o);
        const auto found = second_holders(r);
        const auto faults = injected(r, fault);
        BOOST_TEST_MESSAGE(label << " seed " << seed << ": " << r.holds << " holds, " << faults << " "
                                 << fault << ", " << found << " second holders");
        total.second_holders += found;
        total.faults += faults;
    }
    return total;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(chaos_test)

BOOST_AUTO_TEST_CASE(fixed_seeds_keep_every_rule) {
    for (std::uint64_t seed : {1u, 2u})
        run_and_expect_no_violation(seed);
}

BOOST_AUTO_TEST_CASE(a_random_seed_keeps_every_rule) {
    const std::uint64_t seed = std::random_device{}();
    std::printf(
        "chaos_test: random seed %llu (scripts/chaos --minutes 0.1 --seed %llu draws the same faults)\n",
        static_cast<unsigned long long>(seed), static_cast<unsigned long long>(seed));
    run_and_expect_no_violation(seed);
}

// One voter on a Redis Cluster, and on a master watched by Sentinel: masters killed and failed
// over, failovers asked for, masters back empty before anyone noticed, paused servers, sentinels
// and workers.
BOOST_AUTO_TEST_CASE(a_cluster_keeps_every_rule_through_failovers) {
    run_and_expect_no_violation(1, chaos::topology::cluster);
}

// With Sentinel also a split brain: its master and every worker but one cut from its replicas and
// sentinels for 6 to 8 s, the sentinels promote a replica meanwhile, and the master, which
// writes nothing without a replica, grants and renews nothing more. A group without a master
// that writes takes that long out of a schedule, and the split brain's master refuses writes:
// 40 s of it (30 s held 66 times in a loaded CI run, against the 50 required).
BOOST_AUTO_TEST_CASE(sentinel_keeps_every_rule_through_failovers) {
    run_and_expect_no_violation(1, chaos::topology::sentinel, 40);
}

// A checker that never fails proves nothing: workers that hold on a single node's grant overlap
// under contention alone (a writer beside readers among them, and more holders of a semaphore
// than its bound), and their per-node fences go back; the checker must say so. Every hold was
// granted by one node of five, below the quorum of three, overlap or not; and no node granted
// two holds that overlap (no fault made one forget), which each overlap must say.
BOOST_AUTO_TEST_CASE(the_checker_catches_a_quorum_of_one) {
    auto o = schedule(7, 10);
    o.broken = true;
    o.faults = false;
    const auto r = chaos::run_schedule(o);
    std::size_t overlaps = 0;
    std::size_t read_write = 0;
    std::size_t overlaps_of_disjoint_grants = 0;
    std::size_t permits = 0;
    std::size_t fence_order = 0;
    std::size_t without_quorum = 0;
    for (const auto& v : r.violations) {
        overlaps += v.rule == "mutual_exclusion" ? 1 : 0;
        read_write += v.rule == "mutual_exclusion" && v.detail.starts_with("read_write:") ? 1 : 0;
        overlaps_of_disjoint_grants +=
            v.rule == "mutual_exclusion" && v.detail.ends_with(": no node granted both") ? 1 : 0;
        permits += v.rule == "permits_exceeded" ? 1 : 0;
        fence_order += v.rule == "fence_order" ? 1 : 0;
        without_quorum += v.rule == "grant_without_quorum" ? 1 : 0;
    }
    BOOST_TEST_MESSAGE("broken: " << r.holds << " holds, " << overlaps << " overlaps (" << read_write
                                  << " of a read-write lock), " << permits << " semaphores over their bound, "
                                  << fence_order << " fence-order violations, " << without_quorum
                                  << " holds granted without a quorum");
    BOOST_TEST(overlaps > 0u);
    BOOST_TEST(read_write > 0u);
    BOOST_TEST(overlaps_of_disjoint_grants == overlaps);
    BOOST_TEST(permits > 0u);
    BOOST_TEST(fence_order > 0u);
    BOOST_TEST(without_quorum == r.holds);
    BOOST_TEST(r.holds >= 50u);
}

// The failover quarantine's negative control: on a cluster, and on a master watched by
// Sentinel, whose failovers lose grants (the master's lock keys never reached the replica that
// takes over), workers with the quarantine off are granted at once by the promoted master what
// a holder still counts as its own. A failover shows that only when a paused worker held a lost
// key with validity left: a schedule can miss it by chance (a loaded machine, the one running
// worker holding the keys), so up to four seeds are tried, and one of them must show it.
BOOST_AUTO_TEST_CASE(the_checker_catches_a_failover_without_the_failover_quarantine) {
    for (const auto t : {chaos::topology::cluster, chaos::topology::sentinel}) {
        BOOST_TEST_CONTEXT(chaos::to_string(t)) {
            auto o = control_schedule(t);
            o.broken = true;
            const auto found =
                run_control(o, "master_unreplicated_failover",
                            std::string(chaos::to_string(t)) + " without the failover quarantine");
            BOOST_TEST(found.faults >= 1u);
            BOOST_TEST(found.second_holders > 0u);
        }
    }
}

// The restart quarantine's negative control: on independent masters, twice per schedule every
// server without AOF (three of five) is killed and restarted empty at once while a worker
// sleeps. Workers with the restart quarantine off are granted by those three what a paused
// holder, whose grant the two AOF servers still keep, counts as its own. Up to four seeds, as
// above.
BOOST_AUTO_TEST_CASE(the_checker_catches_a_quorum_restarted_empty_without_the_restart_quarantine) {
    auto o = control_schedule();
    o.restart_quarantine = false;
    o.hand_overs = false;
    const auto found = run_control(o, "quorum_restart_empty", "masters without the restart quarantine");
    BOOST_TEST(found.faults >= 1u);
    BOOST_TEST(found.second_holders > 0u);
}

// The split brain's negative control: with Sentinel, a master cut from its replicas and its
// sentinels while every worker but one still reaches it and nothing else. Its holders renew
// there, and once the promoted master's failover quarantine is over it grants the same locks
// to the worker left outside: unless a master refuses to write without a replica
// (min-replicas-to-write), the checker must find second holders. Up to four seeds, as above.
BOOST_AUTO_TEST_CASE(the_checker_catches_a_split_brain_without_min_replicas_to_write) {
    auto o = control_schedule(chaos::topology::sentinel);
    o.min_replicas_to_write = false;
    o.hand_overs = false;
    const auto found = run_control(o, "split_brain", "sentinel without min-replicas-to-write");
    BOOST_TEST(found.faults >= 1u);
    BOOST_TEST(found.second_holders > 0u);
}

BOOST_AUTO_TEST_SUITE_END()
