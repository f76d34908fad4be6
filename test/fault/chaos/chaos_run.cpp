// SPDX-License-Identifier: BSL-1.0
#include "fault/chaos/chaos_run.hpp"

#include "fault/chaos/lock_kinds.hpp"
#include "support/redis_server.hpp"
#include "support/scratch_dir.hpp"
#include <redlock/redlock.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <nlohmann/json.hpp>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <stdexcept>
#include <thread>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

extern char** environ;

namespace redlock::chaos {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using clock = std::chrono::steady_clock;
using test::redis_server;

namespace {

// The workers' client_config.max_ttl. Sentinel's negative control takes leases of 4 s: its
// switch to a new master takes about a second here (two INFO periods of the sentinels), longer
// than most of what a lease of 1.8 s has left when its holder is paused. (Leases that long in
// every schedule would keep its masters in quarantine for 5 s after each failover, and the
// fenced holds too few to meet a stale write.) So does the restart quarantine's: the servers
// that forgot the holds are back, and their clients reconnected, 0.5 to 1 s after the kill.
std::chrono::milliseconds max_ttl_of(const schedule_options& o) {
    return (o.broken && o.topology == topology::sentinel) || !o.restart_quarantine ? 5000ms : 2000ms;
}

// The worker processes, killed (by PID) and reaped on every exit path. Worker k is pids[k].
struct worker_processes {
    std::vector<pid_t> pids;
    std::vector<bool> reaped;
    std::set<int> killed;  // by kill_now(): no summary expected of them
    ~worker_processes() {
        for (std::size_t i = 0; i < pids.size(); ++i) {
            if (reaped[i]) continue;
            ::kill(pids[i], SIGKILL);
            int status = 0;
            ::waitpid(pids[i], &status, 0);
        }
    }
    void spawn(const std::string& path, std::vector<std::string> args, const std::string& log) {
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        posix_spawn_file_actions_adddup2(&actions, 1, 2);
        std::vector<char*> argv;
        std::string program = path;
        argv.push_back(program.data());
        for (auto& a : args)
            argv.push_back(a.data());
        argv.push_back(nullptr);
        pid_t pid = -1;
        const int rc = posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(), environ);
        posix_spawn_file_actions_destroy(&actions);
        if (rc != 0) throw std::runtime_error("cannot start " + path + ": " + std::to_string(rc));
        pids.push_back(pid);
        reaped.push_back(false);
    }
    // kill -9 of worker k (on purpose: a crash, or a restart), reaped at once.
    void kill_now(std::size_t k) {
        ::kill(pids[k], SIGKILL);
        int status = 0;
        ::waitpid(pids[k], &status, 0);
        reaped[k] = true;
        killed.insert(static_cast<int>(k));
    }
    // Waits for every worker until `deadline`, then kills the rest. Returns how many overran.
    int wait_all(clock::time_point deadline) {
        int overran = 0;
        for (std::size_t i = 0; i < pids.size(); ++i) {
            if (reaped[i]) continue;
            int status = 0;
            while (::waitpid(pids[i], &status, WNOHANG) == 0) {
                if (clock::now() >= deadline) {
                    ::kill(pids[i], SIGKILL);
                    ::waitpid(pids[i], &status, 0);
                    ++overran;
                    break;
                }
                std::this_thread::sleep_for(20ms);
            }
            reaped[i] = true;
        }
        return overran;
    }
};

std::string join(const std::vector<std::string>& parts) {
    std::string out;
    for (const auto& p : parts)
        out += (out.empty() ? "" : ",") + p;
    return out;
}

// After the faults healed: every resource can be acquired again, with the options of its kind,
// and released. Within twice max_ttl + drift: a master promoted as the faults healed may still
// serve its failover quarantine, which this fresh client reads from the master; and a cluster
// client that finds a master in a later read of the slot map than its first quarantines it
// from then (seen: 900 ms into the check).
void check_acquirable_again(const chaos_deployment& deployment, const std::vector<std::string>& resources,
                            std::chrono::milliseconds max_ttl, std::vector<violation>& out) {
    asio::io_context ioc;
    auto client_for = [&](bool fenced) {
        client_config cfg;
        cfg.nodes = deployment.direct_nodes(fenced);
        cfg.key_prefix = "chaos:";
        cfg.max_ttl = max_ttl;
        return std::make_unique<redlock::client>(ioc.get_executor(), cfg);
    };
    const auto plain_client = client_for(false);
    const auto fenced_client = client_for(true);
    for (const auto& resource : resources) {
        const auto& kind = kind_of(resource);
        auto& client = kind.fenced ? *fenced_client : *plain_client;
        lock_options o;
        o.ttl = 500ms;
        o.wait = 2 * (max_ttl + max_ttl / 100) + 500ms;
        o.fenced = kind.fenced;
        if (o.fenced) o.replicas = deployment.fenced_replicas();
        o.reentrant = kind.reentrant;
        if (o.reentrant) o.owner = owner_id("checker");
        o.fair = kind.fair;
        o.queue_timeout = 1500ms;
        if (kind.read_write) o.mode = lock_mode::write;  // the strictest: nobody else holds it
        o.permits = kind.permits;
        boost::system::error_code acquire_ec;
        std::string why;
        bool done = false;
        asio::co_spawn(
            ioc,
            [&]() -> asio::awaitable<void> {
                diagnostics diag;
                auto [ec, l] =
                    co_await client.async_acquire(resource, o, diag, asio::as_tuple(asio::use_awaitable));
                acquire_ec = ec;
                why = diag.message;
                if (!ec) co_await l.async_release(asio::as_tuple(asio::use_awaitable));
                done = true;
            },
            [](std::exception_ptr) {});
        const auto limit = clock::now() + o.wait + 3s;
        while (!done && clock::now() < limit)
            ioc.run_one_for(50ms);
        if (!done || acquire_ec) {
            out.push_back({"acquirable_after_heal",
                           resource +
                               ": not acquired within twice max_ttl + drift after the faults healed: " +
                               (done ? acquire_ec.message() + " (" + why + ")" : std::string("no answer")),
                           {}});
        }
    }
}

// How long a client stays listed as waiting on a resource unless it renews it (the client's
// release_listener::listing_lease).
constexpr std::int64_t listing_lease_ms = 6000;

// Keys of ours but the bookkeeping kept for good (lock_kinds.hpp). Every lock was released or
// has expired by now, and fair queues empty themselves.
std::vector<std::string> keys_left(const std::vector<const redis_server*>& servers) {
    std::vector<std::string> out;
    for (std::size_t n = 0; n < servers.size(); ++n) {
        const auto reply = servers[n]->command({"KEYS", "{chaos:*"});
        for (const auto& key : reply.elements) {
            if (bookkeeping_key(key.str)) continue;
            // The list of clients waiting on a resource (the sorted set at its channel's name): a
            // killed worker's entry outlives max_ttl, but not its lease, and the list expires.
            if (key.str.ends_with("}:released")) {
                const auto pttl = servers[n]->command({"PTTL", key.str}).integer;
                if (pttl > 0 && pttl <= listing_lease_ms) continue;
            }
            out.push_back("node " + std::to_string(n) + ": " + key.str);
        }
    }
    return out;
}

std::map<std::string, std::vector<accepted_write>> store_contents(const redis_server& store,
                                                                  const std::vector<std::string>& resources) {
    std::map<std::string, std::vector<accepted_write>> out;
    for (const auto& resource : resources) {
        const auto reply = store.command({"LRANGE", "store:" + resource + ":accepted", "0", "-1"});
        auto& writes = out[resource];
        // "<fence> <token> <lineage>", the lineage itself "owner ..." or "token ...".
        for (const auto& e : reply.elements) {
            const auto space = e.str.find(' ');
            const auto second = space == std::string::npos ? space : e.str.find(' ', space + 1);
            if (second == std::string::npos) continue;
            writes.push_back({std::stoull(e.str.substr(0, space)),
                              e.str.substr(space + 1, second - space - 1), e.str.substr(second + 1)});
        }
    }
    return out;
}

}  // namespace

schedule_result run_schedule(const schedule_options& options) {
    const auto started = clock::now();
    schedule_result result;
    result.seed = options.seed;
    result.topology = options.topology;
    test::scratch_dir dir;

    const auto deployment = make_deployment(options.topology, options.workers, options.min_replicas_to_write);
    redis_server store;
    const auto max_ttl = max_ttl_of(options);

    // The workers' restart quarantine counts a server up for less than max_ttl as restarted
    // (its uptime is in whole seconds): let the fresh servers age first.
    std::this_thread::sleep_for(max_ttl + 1100ms);

    worker_processes workers;
    std::vector<std::string> histories;
    // Worker k (its history and log) works in `slot` (its proxies on the masters topology) for
    // `seconds`. The negative control: a quorum of 1 among independent masters, the failover
    // quarantine off on the failover topologies.
    const bool quorum_of_one = options.broken && options.topology == topology::masters;
    const bool no_failover_quarantine = options.broken && options.topology != topology::masters;
    // Leases of 1.8 s outlive a failover (a cluster's handshake takes 0.1-0.5 s here, Sentinel's
    // switch about a second), which the failover quarantine is for; its negative control holds
    // long leases only, the ones that show what the quarantine is for (a lease of 0.8 s, paused
    // on a loaded machine, has often run out before the promoted master is asked).
    const std::string broken_ttls = options.topology == topology::sentinel ? "4000" : "1800";
    // The restart quarantine's control: long leases too, which a paused worker still counts
    // when the servers that forgot them are back.
    // A cluster's longest lease stays within what its split brain allows (docs/deployments.md:
    // max_ttl - ttl at least cluster-node-timeout / 2 - 0.5 s: 0.5 s here).
    const std::string ttls = !options.restart_quarantine             ? "4000"
                             : options.topology == topology::masters ? "300,500,800"
                             : no_failover_quarantine                ? broken_ttls
                             : options.topology == topology::cluster ? "300,500,800,1500"
                                                                     : "300,500,800,1800";
    auto spawn_worker = [&](std::size_t slot, int seconds) {
        const auto w = histories.size();
        histories.push_back((dir.path / ("history-" + std::to_string(w) + ".jsonl")).string());
        // clang-format off
        workers.spawn(options.worker_path, {"--worker",              std::to_string(w),
                                            "--nodes",               join(deployment->worker_nodes(slot, false)),
                                            "--fenced-nodes",        join(deployment->worker_nodes(slot, true)),
                                            "--store",               store.uri(),
                                            "--history",             histories.back(),
                                            "--seconds",             std::to_string(seconds),
                                            "--seed",                std::to_string(options.seed),
                                            "--coroutines",          std::to_string(options.coroutines),
                                            "--resources",           std::to_string(options.resources),
                                            "--fenced-replicas",     std::to_string(deployment->fenced_replicas()),
                                            "--broken",              quorum_of_one ? "1" : "0",
                                            "--failover-quarantine", no_failover_quarantine ? "0" : "1",
                                            "--restart-quarantine",  options.restart_quarantine ? "1" : "0",
                                            "--ttls",                ttls,
                                            "--max-ttl",             std::to_string(max_ttl.count()),
                                            "--hand-overs",          options.hand_overs ? "1" : "0"},
                      (dir.path / ("worker-" + std::to_string(w) + ".log")).string());
        // clang-format on
        return workers.pids.back();
    };
    for (int w = 0; w < options.workers; ++w)
        (void)spawn_worker(static_cast<std::size_t>(w), options.seconds);
    // The worker process of each slot now.
    std::vector<std::size_t> in_slot(static_cast<std::size_t>(options.workers));
    for (std::size_t w = 0; w < in_slot.size(); ++w)
        in_slot[w] = w;

    const auto faults = deployment->faults(options.seed, workers.pids);
    const auto faults_end = clock::now() + std::chrono::seconds(options.seconds);
    faults->set_respawn([&](std::size_t slot) {
        workers.kill_now(in_slot[slot]);
        const auto left = std::chrono::ceil<std::chrono::seconds>(faults_end - clock::now());
        const auto pid =
            spawn_worker(slot, static_cast<int>(std::max<std::chrono::seconds::rep>(1, left.count())));
        in_slot[slot] = workers.pids.size() - 1;
        return pid;
    });
    if (options.faults) {
        auto next = clock::now() + faults->next_gap();
        while (clock::now() < faults_end) {
            std::this_thread::sleep_for(std::min<clock::duration>(10ms, faults_end - clock::now()));
            faults->heal_due();
            faults->observe();
            if (clock::now() >= next) {
                faults->inject();
                next = clock::now() + faults->next_gap();
            }
        }
        faults->heal_all();
    }
    result.faults = faults->injected();
    result.fault_log = faults->log();
    {
        std::ofstream log(dir.path / "faults.jsonl");
        for (const auto& line : result.fault_log)
            log << line << "\n";
    }

    const int overran = workers.wait_all(clock::now() + std::chrono::seconds(options.seconds + 90));

    if (const char* keep = std::getenv("REDLOCK_CHAOS_KEEP")) {
        // The histories and worker logs, for a look at a schedule beyond its violations.
        std::error_code ignored;
        const auto into = std::filesystem::path(keep) / ("seed-" + std::to_string(options.seed));
        std::filesystem::create_directories(into, ignored);
        std::filesystem::copy(
            dir.path, into,
            std::filesystem::copy_options::recursive | std::filesystem::copy_options::overwrite_existing,
            ignored);
    }
    history h;
    std::size_t bad_lines = 0;
    for (const auto& path : histories)
        read_history_file(path, h, bad_lines);
    result.bad_lines = bad_lines;
    const auto resources = all_resources(options.resources);
    result.violations = check_history(h, store_contents(store, resources),
                                      static_cast<int>(workers.pids.size()), workers.killed);
    if (overran > 0) {
        result.violations.push_back(
            {"scopes_ended",
             std::to_string(overran) + " worker(s) did not finish in time and were killed",
             {}});
    }

    if (!options.broken && options.restart_quarantine) {
        // Restarted servers vote again once the quarantine is over; then max_ttl is the bound.
        // (The negative controls leave what they broke behind them.)
        deployment->settle();
        std::this_thread::sleep_until(std::max(clock::now(), faults->last_restart() + max_ttl + 100ms));
        check_acquirable_again(*deployment, resources, max_ttl, result.violations);
        std::vector<std::string> left;
        const auto keys_deadline = clock::now() + max_ttl;
        while (!(left = keys_left(deployment->key_servers())).empty() && clock::now() < keys_deadline)
            std::this_thread::sleep_for(50ms);
        if (!left.empty())
            result.violations.push_back({"keys_left", "keys of ours left after max_ttl", left});
    }

    result.holds = h.holds.size();
    for (const auto& hold : h.holds) {
        result.holds_lost += hold.outcome == "lost" ? 1 : 0;
        ++result.holds_by_kind[std::string(kind_of(hold.resource).name)];
    }
    result.holds_judged = judged_holds(h);
    // A verdict on holds the rules could not judge is no verdict: most holds must be judged.
    if (result.holds_judged * 2 < result.holds || result.holds_judged == 0) {
        result.violations.push_back({"coverage",
                                     "only " + std::to_string(result.holds_judged) + " of " +
                                         std::to_string(result.holds) +
                                         " holds had a non-empty interval: the rules saw too little",
                                     {}});
    }
    result.acquire_failures = h.failures.size();
    result.writes = h.writes.size();
    for (const auto& w : h.writes)
        result.writes_refused += w.accepted ? 0 : 1;
    result.reentries = h.reentries.size();
    for (const auto& s : h.summaries) {
        result.watchdog_renewals += s.watchdog_renewals;
        result.extends += s.extends;
        result.handovers += s.handovers;
        result.adoptions += s.adoptions;
    }
    result.seconds = std::chrono::duration<double>(clock::now() - started).count();
    return result;
}

void print_violations(const schedule_result& r, std::FILE* out) {
    constexpr int shown_per_rule = 5;
    std::map<std::string, int> seen;
    for (const auto& v : r.violations) {
        if (++seen[v.rule] > shown_per_rule) continue;
        std::fprintf(out, "VIOLATION seed=%llu %s: %s\n", static_cast<unsigned long long>(r.seed),
                     v.rule.c_str(), v.detail.c_str());
        for (const auto& e : v.evidence)
            std::fprintf(out, "    %s\n", e.c_str());
        // The faults of the longest max_ttl before the first record until the last one.
        nanos first = std::numeric_limits<nanos>::max();
        nanos last = 0;
        for (const auto& e : v.evidence) {
            const auto j = nlohmann::json::parse(e, nullptr, false);
            for (const char* field : {"acquired", "invoked", "ended", "completed"}) {
                if (!j.is_object() || !j.contains(field)) continue;
                first = std::min(first, j[field].get<nanos>());
                last = std::max(last, j[field].get<nanos>());
            }
        }
        if (last == 0) continue;
        schedule_options longest;
        longest.topology = r.topology;
        longest.broken = true;
        const auto window_start =
            first - std::chrono::duration_cast<std::chrono::nanoseconds>(max_ttl_of(longest)).count();
        for (const auto& f : r.fault_log) {
            const auto j = nlohmann::json::parse(f, nullptr, false);
            const auto at = j.value("at", nanos{0});
            if (at >= window_start && at <= last) std::fprintf(out, "    fault: %s\n", f.c_str());
        }
    }
    for (const auto& [rule, n] : seen)
        if (n > shown_per_rule)
            std::fprintf(out, "VIOLATION seed=%llu %s: %d more not shown\n",
                         static_cast<unsigned long long>(r.seed), rule.c_str(), n - shown_per_rule);
}

}  // namespace redlock::chaos
