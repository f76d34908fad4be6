// Mutual exclusion across processes: 3 processes x 50 coroutines x 100 acquisitions of one
// resource, N = 1 and N = 5; and 200 waiters in 4 processes woken by release messages. Inside the critical
// section each updates a counter on a separate checker server by read-sleep-write and counts holders; a lost
// update or a second holder shows.
#include "support/redis_server.hpp"

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <csignal>
#include <string>
#include <thread>
#include <vector>

#include <spawn.h>
#include <sys/wait.h>

extern char** environ;

namespace data = boost::unit_test::data;
using namespace std::chrono_literals;
using redlock::test::redis_server;
using redlock::test::start_redis_servers;

namespace {

pid_t spawn_contender(const std::vector<std::string>& args) {
    std::vector<char*> argv;
    std::string path = REDLOCK_CONTENDER_PATH;
    argv.push_back(path.data());
    std::vector<std::string> copy = args;
    for (auto& a : copy)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = -1;
    int rc = posix_spawn(&pid, path.c_str(), nullptr, nullptr, argv.data(), environ);
    BOOST_TEST_REQUIRE(rc == 0, "posix_spawn " << path << ": " << rc);
    return pid;
}

// Waits for the child up to `limit`; kills it (by its PID) if it overruns. Returns its exit status.
int wait_for(pid_t pid, std::chrono::seconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    int status = 0;
    while (true) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        if (std::chrono::steady_clock::now() >= deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            return -1;
        }
        std::this_thread::sleep_for(20ms);
    }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(mutual_exclusion_test)

BOOST_DATA_TEST_CASE(three_processes_of_fifty_coroutines_never_overlap, data::make({1, 5}), n) {
    auto nodes = start_redis_servers(static_cast<std::size_t>(n));
    redis_server checker;
    std::string uris;
    for (const auto& s : nodes)
        uris += (uris.empty() ? "" : ",") + s->uri();
    constexpr int processes = 3, coroutines = 50, rounds = 100;
    const auto start = std::chrono::steady_clock::now();
    std::vector<pid_t> pids;
    for (int p = 0; p < processes; ++p) {
        pids.push_back(spawn_contender({"--nodes", uris, "--checker", checker.uri(), "--resource",
                                        "contended", "--coroutines", std::to_string(coroutines), "--rounds",
                                        std::to_string(rounds)}));
    }
    for (auto pid : pids)
        BOOST_TEST(wait_for(pid, 280s) == 0);
    BOOST_TEST_MESSAGE("N = " << n << ": " << processes * coroutines * rounds << " critical sections in "
                              << std::chrono::duration_cast<std::chrono::milliseconds>(
                                     std::chrono::steady_clock::now() - start)
                                     .count()
                              << " ms");
    BOOST_TEST(checker.command({"GET", "counter"}).str == std::to_string(processes * coroutines * rounds));
    BOOST_TEST(checker.command({"GET", "overlaps"}).is_null());
    BOOST_TEST(checker.command({"GET", "holders"}).str == "0");
    for (const auto& s : nodes)
        BOOST_TEST(s->command({"EXISTS", "{redlock:contended}:lock"}).integer == 0);
}

// 200 waiters on one lock in 4 processes, woken by release messages: each release wakes at most
// one waiter per process (the herd would be every waiter of every process).
BOOST_DATA_TEST_CASE(two_hundred_waiters_in_four_processes_each_get_the_lock_without_a_herd,
                     data::make({1, 5}), n) {
    auto nodes = start_redis_servers(static_cast<std::size_t>(n));
    redis_server checker;
    std::string uris;
    for (const auto& s : nodes)
        uris += (uris.empty() ? "" : ",") + s->uri();
    constexpr int processes = 4, coroutines = 50;
    std::vector<pid_t> pids;
    for (int p = 0; p < processes; ++p) {
        pids.push_back(spawn_contender({"--nodes", uris, "--checker", checker.uri(), "--resource", "herd",
                                        "--coroutines", std::to_string(coroutines), "--rounds", "1",
                                        "--retry-max-ms", "1000"}));
    }
    for (auto pid : pids)
        BOOST_TEST(wait_for(pid, 120s) == 0);
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
        auto numsub = s->command({"PUBSUB", "NUMSUB", "{redlock:herd}:released"});
        BOOST_TEST(numsub.elements.at(1).integer == 0);
    }
}

BOOST_AUTO_TEST_SUITE_END()
