// SPDX-License-Identifier: BSL-1.0
// Mutual exclusion across processes: 3 processes x 50 coroutines x 50 acquisitions of one
// resource, N = 1 and N = 5, on a cluster, over 3 clusters and through Sentinel; and 200 waiters in 4
// processes woken by release messages. Inside the critical section each updates a counter on a separate
// checker server by read-sleep-write and counts holders; a lost update or a second holder shows.
#include "redis/cluster_slot.hpp"
#include "support/child_process.hpp"
#include "support/lock_helpers.hpp"
#include "support/redis_cluster.hpp"
#include "support/redis_sentinel.hpp"
#include "support/redis_server.hpp"
#include "support/sanitizer.hpp"

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <string>
#include <vector>

namespace data = boost::unit_test::data;
using namespace std::chrono_literals;
using redlock::test::redis_server;
using redlock::test::start_redis_servers;
using redlock::test::wait_child;

namespace {

pid_t spawn_contender(const std::vector<std::string>& args) {
    return redlock::test::spawn_child(REDLOCK_CONTENDER_PATH, args);
}

// `processes` contenders for "contended" on `uris`, each with `coroutines` x `rounds` critical
// sections: all of them counted on the checker, none overlapping another, nobody inside at the end.
void contend(const std::string& uris, const redis_server& checker, int processes, int coroutines,
             int rounds) {
    const auto start = std::chrono::steady_clock::now();
    std::vector<pid_t> pids;
    for (int p = 0; p < processes; ++p) {
        pids.push_back(spawn_contender({"--nodes", uris, "--checker", checker.uri(), "--resource",
                                        "contended", "--coroutines", std::to_string(coroutines), "--rounds",
                                        std::to_string(rounds)}));
    }
    for (auto pid : pids)
        BOOST_TEST(wait_child(pid, 280s) == 0);
    BOOST_TEST_MESSAGE(uris << ": " << processes * coroutines * rounds << " critical sections in "
                            << std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::steady_clock::now() - start)
                                   .count()
                            << " ms");
    BOOST_TEST(checker.command({"GET", "counter"}).str == std::to_string(processes * coroutines * rounds));
    BOOST_TEST(checker.command({"GET", "overlaps"}).is_null());
    BOOST_TEST(checker.command({"GET", "holders"}).str == "0");
}

}  // namespace

BOOST_AUTO_TEST_SUITE(mutual_exclusion_test)

BOOST_DATA_TEST_CASE(three_processes_of_fifty_coroutines_never_overlap, data::make({1, 5}), n) {
    auto nodes = start_redis_servers(static_cast<std::size_t>(n));
    redis_server checker;
    const auto uris = redlock::test::node_uris(nodes);
    contend(uris, checker, 3, 50, redlock::test::under_sanitizer ? 20 : 50);
    for (const auto& s : nodes)
        BOOST_TEST(s->command({"EXISTS", "{redlock:contended}:lock"}).integer == 0);
}

// The negative control: the same critical sections without the lock. The checker must see
// them overlap and lose updates, or its silence above would mean nothing.
BOOST_AUTO_TEST_CASE(without_the_lock_the_checker_sees_overlaps_and_lost_updates) {
    auto nodes = start_redis_servers(1);
    redis_server checker;
    const auto uris = redlock::test::node_uris(nodes);
    std::vector<pid_t> pids;
    for (int p = 0; p < 3; ++p) {
        pids.push_back(
            spawn_contender({"--nodes", uris, "--checker", checker.uri(), "--resource", "contended",
                             "--coroutines", "50", "--rounds", "5", "--no-lock", "1"}));
    }
    for (auto pid : pids)
        BOOST_TEST(wait_child(pid, 280s) == 0);
    const auto overlaps = checker.command({"GET", "overlaps"});
    BOOST_TEST_REQUIRE(!overlaps.is_null());
    BOOST_TEST(std::stol(overlaps.str) > 0);
    BOOST_TEST(std::stol(checker.command({"GET", "counter"}).str) < 3 * 50 * 5);
    BOOST_TEST(checker.command({"GET", "holders"}).str == "0");
}

// The same on a 3-master cluster (N = 1) and over 3 one-master clusters (N = 3): the lock of the
// resource lives on the master of its slot.
BOOST_DATA_TEST_CASE(three_processes_on_clusters_never_overlap, data::make({1, 3}), n) {
    redlock::test::redis_cluster_options o;
    o.masters = n == 1 ? 3 : 1;
    o.replicas_per_master = 0;
    std::vector<std::unique_ptr<redlock::test::redis_cluster>> clusters;
    std::string uris;
    for (int i = 0; i < n; ++i) {
        clusters.push_back(std::make_unique<redlock::test::redis_cluster>(o));
        uris += (uris.empty() ? "" : ",") + clusters.back()->uri();
    }
    redis_server checker;
    contend(uris, checker, 3, 20, redlock::test::under_sanitizer ? 10 : 30);
    const std::string key = "{redlock:contended}:lock";
    for (const auto& cluster : clusters) {
        const auto exists =
            cluster->master_of_slot(redlock::redis::detail::key_slot(key)).command({"EXISTS", key});
        BOOST_TEST((exists.kind == redlock::resp::type::integer && exists.integer == 0));
    }
}

// The same on a master found through 3 sentinels (N = 1).
BOOST_AUTO_TEST_CASE(three_processes_on_a_sentinel_master_never_overlap) {
    redlock::test::redis_sentinel_group group;
    redis_server checker;
    contend(group.uri(), checker, 3, 20, redlock::test::under_sanitizer ? 10 : 30);
    BOOST_TEST(group.master().command({"EXISTS", "{redlock:contended}:lock"}).integer == 0);
}

// The fair lock across processes: 3 processes x 10 coroutines x 20 acquisitions through the queue.
BOOST_DATA_TEST_CASE(three_processes_through_a_fair_queue_never_overlap, data::make({1, 5}), n) {
    auto nodes = start_redis_servers(static_cast<std::size_t>(n));
    redis_server checker;
    const auto uris = redlock::test::node_uris(nodes);
    constexpr int processes = 3, coroutines = 10, rounds = 20;
    std::vector<pid_t> pids;
    for (int p = 0; p < processes; ++p) {
        pids.push_back(spawn_contender({"--nodes", uris, "--checker", checker.uri(), "--resource", "fair",
                                        "--coroutines", std::to_string(coroutines), "--rounds",
                                        std::to_string(rounds), "--fair", "1"}));
    }
    for (auto pid : pids)
        BOOST_TEST(wait_child(pid, 120s) == 0);
    BOOST_TEST(checker.command({"GET", "counter"}).str == std::to_string(processes * coroutines * rounds));
    BOOST_TEST(checker.command({"GET", "overlaps"}).is_null());
    for (const auto& s : nodes) {
        BOOST_TEST(s->command({"EXISTS", "{redlock:fair}:lock", "{redlock:fair}:queue",
                               "{redlock:fair}:queue:deadlines", "{redlock:fair}:queue:tickets"})
                       .integer == 0);
    }
}

// 200 waiters on one lock in 4 processes, woken by release messages: each release wakes at most
// one waiter per process (the herd would be every waiter of every process).
BOOST_DATA_TEST_CASE(two_hundred_waiters_in_four_processes_each_get_the_lock_without_a_herd,
                     data::make({1, 5}), n) {
    auto nodes = start_redis_servers(static_cast<std::size_t>(n));
    redis_server checker;
    const auto uris = redlock::test::node_uris(nodes);
    constexpr int processes = 4, coroutines = 50;
    std::vector<pid_t> pids;
    for (int p = 0; p < processes; ++p) {
        pids.push_back(spawn_contender({"--nodes", uris, "--checker", checker.uri(), "--resource", "herd",
                                        "--coroutines", std::to_string(coroutines), "--rounds", "1",
                                        "--retry-max-ms", "1000"}));
    }
    for (auto pid : pids)
        BOOST_TEST(wait_child(pid, 120s) == 0);
    constexpr int holds = processes * coroutines;
    BOOST_TEST(checker.command({"GET", "counter"}).str == std::to_string(holds));
    BOOST_TEST(checker.command({"GET", "overlaps"}).is_null());
    const long wakeups = std::atol(checker.command({"GET", "wakeups"}).str.c_str());
    const long attempts = std::atol(checker.command({"GET", "attempts"}).str.c_str());
    BOOST_TEST_MESSAGE("N = " << n << ": " << holds << " holds, " << wakeups << " wake-ups, " << attempts
                              << " attempts");
    BOOST_TEST(wakeups >= holds / 2);  // most hand-offs came by message
    BOOST_TEST(wakeups <= processes * holds);
    for (const auto& s : nodes) {
        BOOST_TEST(s->command({"EXISTS", "{redlock:herd}:lock"}).integer == 0);
        auto numsub = s->command({"PUBSUB", "SHARDNUMSUB", "{redlock:herd}:released"});
        BOOST_TEST(numsub.elements.at(1).integer == 0);
    }
}

BOOST_AUTO_TEST_SUITE_END()
