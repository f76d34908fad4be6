#include "fault/chaos/chaos_run.hpp"

#include "fault/chaos/fault_injector.hpp"
#include "support/redis_server.hpp"
#include "support/tcp_proxy.hpp"
#include <redlock/redlock.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <array>
#include <csignal>
#include <cstdlib>
#include <filesystem>
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
using test::tcp_proxy;

namespace {

constexpr std::array<const char*, 4> kinds = {"plain", "fenced", "reentrant", "fair"};
constexpr auto max_ttl = 2000ms;  // the workers' client_config.max_ttl

// The workers' temp files; removed with everything in them.
struct scratch {
    std::filesystem::path path;
    scratch() {
        std::string tmpl = (std::filesystem::temp_directory_path() / "redlock-chaos-XXXXXX").string();
        if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
        path = tmpl;
    }
    ~scratch() {
        std::error_code ignored;
        std::filesystem::remove_all(path, ignored);
    }
    scratch(const scratch&) = delete;
    scratch& operator=(const scratch&) = delete;
};

// The worker processes, killed (by PID) and reaped on every exit path.
struct worker_processes {
    std::vector<pid_t> pids;
    std::vector<bool> reaped;
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
    // Waits for every worker until `deadline`, then kills the rest. Returns how many overran.
    int wait_all(clock::time_point deadline) {
        int overran = 0;
        for (std::size_t i = 0; i < pids.size(); ++i) {
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

std::vector<std::string> resources_of(int per_kind) {
    std::vector<std::string> out;
    for (const char* kind : kinds)
        for (int i = 0; i < per_kind; ++i)
            out.push_back(std::string(kind) + ":" + std::to_string(i));
    return out;
}

// After the faults healed: every resource can be acquired again within max_ttl, with the
// options of its kind, and released.
void check_acquirable_again(const std::vector<std::unique_ptr<redis_server>>& servers,
                            const std::vector<std::string>& resources, std::vector<violation>& out) {
    asio::io_context ioc;
    client_config cfg;
    for (const auto& s : servers)
        cfg.nodes.push_back(s->uri());
    cfg.key_prefix = "chaos:";
    cfg.max_ttl = max_ttl;
    redlock::client client(ioc.get_executor(), cfg);
    for (const auto& resource : resources) {
        lock_options o;
        o.ttl = 500ms;
        o.wait = max_ttl;
        o.fenced = resource.rfind("plain:", 0) != 0;
        o.reentrant = resource.rfind("reentrant:", 0) == 0;
        if (o.reentrant) o.owner = owner_id("checker");
        o.fair = resource.rfind("fair:", 0) == 0;
        o.queue_timeout = 1500ms;
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
        const auto limit = clock::now() + max_ttl + 3s;
        while (!done && clock::now() < limit)
            ioc.run_one_for(50ms);
        if (!done || acquire_ec) {
            out.push_back({"acquirable_after_heal",
                           resource + ": not acquired within max_ttl after the faults healed: " +
                               (done ? acquire_ec.message() + " (" + why + ")" : std::string("no answer")),
                           {}});
        }
    }
}

// Keys of ours other than the fence counters (which are kept for good, so fences never go
// back). Every lock was released or has expired by now, and fair queues empty themselves.
std::vector<std::string> keys_left(const std::vector<std::unique_ptr<redis_server>>& servers) {
    std::vector<std::string> out;
    for (std::size_t n = 0; n < servers.size(); ++n) {
        const auto reply = servers[n]->command({"KEYS", "{chaos:*"});
        for (const auto& key : reply.elements) {
            const auto& k = key.str;
            if (k.size() >= 6 && k.compare(k.size() - 6, 6, ":fence") == 0) continue;
            out.push_back("node " + std::to_string(n) + ": " + k);
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
        for (const auto& e : reply.elements) {
            const auto space = e.str.find(' ');
            if (space == std::string::npos) continue;
            writes.push_back({std::stoull(e.str.substr(0, space)), e.str.substr(space + 1)});
        }
    }
    return out;
}

}  // namespace

schedule_result run_schedule(const schedule_options& options) {
    const auto started = clock::now();
    schedule_result result;
    result.seed = options.seed;
    scratch dir;

    test::redis_server_options plain;
    test::redis_server_options aof;
    aof.appendonly = true;
    aof.appendfsync = "always";
    std::vector<std::unique_ptr<redis_server>> servers;
    for (int n = 0; n < 5; ++n)
        servers.push_back(std::make_unique<redis_server>(n >= 3 ? aof : plain));
    redis_server store;

    std::vector<std::vector<std::unique_ptr<tcp_proxy>>> proxies(static_cast<std::size_t>(options.workers));
    for (auto& per_worker : proxies)
        for (const auto& s : servers)
            per_worker.push_back(std::make_unique<tcp_proxy>(s->port()));

    // The workers' restart quarantine counts a server up for less than max_ttl as restarted
    // (its uptime is in whole seconds): let the fresh servers age first.
    std::this_thread::sleep_for(max_ttl + 1100ms);

    worker_processes workers;
    std::vector<std::string> histories;
    for (int w = 0; w < options.workers; ++w) {
        std::vector<std::string> uris;
        for (const auto& p : proxies[static_cast<std::size_t>(w)])
            uris.push_back(p->uri());
        histories.push_back((dir.path / ("history-" + std::to_string(w) + ".jsonl")).string());
        workers.spawn(
            options.worker_path,
            {"--worker", std::to_string(w), "--nodes", join(uris), "--store", store.uri(), "--history",
             histories.back(), "--seconds", std::to_string(options.seconds), "--seed",
             std::to_string(options.seed), "--coroutines", std::to_string(options.coroutines), "--resources",
             std::to_string(options.resources), "--broken", options.broken ? "1" : "0"},
            (dir.path / ("worker-" + std::to_string(w) + ".log")).string());
    }

    fault_injector faults(options.seed, servers, proxies, workers.pids);
    const auto faults_end = clock::now() + std::chrono::seconds(options.seconds);
    if (options.faults) {
        auto next = clock::now() + faults.next_gap();
        while (clock::now() < faults_end) {
            std::this_thread::sleep_for(std::min<clock::duration>(10ms, faults_end - clock::now()));
            faults.heal_due();
            if (clock::now() >= next) {
                faults.inject();
                next = clock::now() + faults.next_gap();
            }
        }
        faults.heal_all();
    }
    result.faults = faults.injected();

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
    const auto resources = resources_of(options.resources);
    result.violations = check_history(h, store_contents(store, resources), options.workers);
    if (overran > 0) {
        result.violations.push_back(
            {"scopes_ended",
             std::to_string(overran) + " worker(s) did not finish in time and were killed",
             {}});
    }

    if (!options.broken) {
        // Restarted servers vote again once the quarantine is over; then max_ttl is the bound.
        std::this_thread::sleep_until(std::max(clock::now(), faults.last_restart() + max_ttl + 100ms));
        check_acquirable_again(servers, resources, result.violations);
        std::vector<std::string> left;
        const auto keys_deadline = clock::now() + max_ttl;
        while (!(left = keys_left(servers)).empty() && clock::now() < keys_deadline)
            std::this_thread::sleep_for(50ms);
        if (!left.empty())
            result.violations.push_back({"keys_left", "keys of ours left after max_ttl", left});
    }

    result.holds = h.holds.size();
    for (const auto& hold : h.holds)
        result.holds_lost += hold.outcome == "lost" ? 1 : 0;
    result.acquire_failures = h.failures.size();
    result.writes = h.writes.size();
    for (const auto& w : h.writes)
        result.writes_refused += w.accepted ? 0 : 1;
    result.reentries = h.reentries.size();
    for (const auto& s : h.summaries)
        result.watchdog_renewals += s.watchdog_renewals;
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
    }
    for (const auto& [rule, n] : seen)
        if (n > shown_per_rule)
            std::fprintf(out, "VIOLATION seed=%llu %s: %d more not shown\n",
                         static_cast<unsigned long long>(r.seed), rule.c_str(), n - shown_per_rule);
}

}  // namespace redlock::chaos
