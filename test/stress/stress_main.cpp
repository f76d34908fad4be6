// SPDX-License-Identifier: BSL-1.0
// stress: many clients and many waiters against real redis-servers for a bounded time, then a
// check that nothing was left behind. What scripts/stress runs (1,000 connections, 10,000
// waiters, 60 s), and ctest in small (stress_smoke).
//
// The load runs in two phases of half the time each, each with its own io_context and clients,
// torn down at its end. After each phase: every waiter came back (acquired, or wait_timeout:
// nothing else), no two waiters held one resource at once, no key and no subscription is left
// on any server, the servers' client counts and this process's open files are back to what
// they were before the first phase. Memory: this process's resident size after the second
// phase (free pages given back by malloc_trim) must not exceed the first's by more than
// 10 % + 16 MiB: growth there would be a leak proportional to the load.
#include "support/bookkeeping_keys.hpp"
#include "support/redis_server.hpp"
#include <redlock/redlock.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

namespace asio = boost::asio;
using namespace std::chrono_literals;
using std::chrono::milliseconds;
using steady = std::chrono::steady_clock;

namespace {

struct args {
    int seconds = 60;
    int clients = 200;
    int waiters = 10000;
    int resources = 100;
    int nodes = 5;
};

bool parse(int argc, char** argv, args& a) {
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string key = argv[i];
        char* end = nullptr;
        const long v = std::strtol(argv[i + 1], &end, 10);
        if (end == argv[i + 1] || *end != '\0' || v <= 0 || v > 1000000) return false;
        const int value = static_cast<int>(v);
        if (key == "--seconds") {
            a.seconds = value;
        } else if (key == "--clients") {
            a.clients = value;
        } else if (key == "--waiters") {
            a.waiters = value;
        } else if (key == "--resources") {
            a.resources = value;
        } else if (key == "--nodes") {
            a.nodes = value;
        } else {
            return false;
        }
    }
    return argc % 2 == 1 && a.seconds >= 2;
}

std::size_t open_files() {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/fd"))
        ++n;
    return n;
}

// After giving the allocator's free pages back to the system: what stays is what is still
// allocated (and fragmentation), not what a phase freed and the allocator kept for later.
std::size_t resident_bytes() {
    malloc_trim(0);
    std::ifstream statm("/proc/self/statm");
    std::size_t pages = 0;
    std::size_t resident = 0;
    statm >> pages >> resident;
    return resident * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

// What the servers hold: the state a run must leave as it found it.
struct server_state {
    std::int64_t clients = 0;
    std::int64_t keys = 0;
    std::int64_t channels = 0;
};

std::int64_t info_field(const std::string& info, const std::string& name) {
    const auto at = info.find(name + ":");
    return at == std::string::npos ? -1 : std::atoll(info.c_str() + at + name.size() + 1);
}

server_state state_of(const redlock::test::redis_server& s) {
    server_state st;
    st.clients = info_field(s.command({"INFO", "clients"}).str, "connected_clients");
    st.keys = redlock::test::keys_but_bookkeeping(s);
    st.channels = static_cast<std::int64_t>(s.command({"PUBSUB", "SHARDCHANNELS"}).elements.size());
    return st;
}

struct tally {
    std::atomic<std::uint64_t> acquired{0};
    std::atomic<std::uint64_t> timed_out{0};
    std::atomic<std::uint64_t> other_errors{0};
    std::atomic<std::uint64_t> overlaps{0};
    std::atomic<std::uint64_t> finished{0};
    std::mutex mutex;
    std::string first_error;
};

asio::awaitable<void> waiter(redlock::client& client, std::vector<std::atomic<int>>& holders, tally& t,
                             steady::time_point deadline, unsigned seed) {
    std::mt19937 rng(seed);
    constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);
    asio::steady_timer timer(co_await asio::this_coro::executor);
    while (steady::now() < deadline) {
        const auto r = rng() % holders.size();
        redlock::lock_options o;
        o.ttl = 10s;  // released explicitly; the ttl only bounds a leak
        o.wait = 5s;
        o.watchdog = false;
        auto [ec, lease] = co_await client.async_acquire("stress:" + std::to_string(r), o, tuple_awaitable);
        if (!ec) {
            if (holders[r].fetch_add(1) != 0) t.overlaps.fetch_add(1);
            timer.expires_after(milliseconds(rng() % 3));
            co_await timer.async_wait(tuple_awaitable);
            holders[r].fetch_sub(1);
            auto [release_ec] = co_await lease.async_release(tuple_awaitable);
            if (release_ec) {
                std::scoped_lock lock(t.mutex);
                if (t.first_error.empty()) t.first_error = "release: " + release_ec.message();
                t.other_errors.fetch_add(1);
            }
            t.acquired.fetch_add(1);
        } else if (ec == redlock::error::wait_timeout) {
            t.timed_out.fetch_add(1);
        } else {
            std::scoped_lock lock(t.mutex);
            if (t.first_error.empty()) t.first_error = "acquire: " + ec.message();
            t.other_errors.fetch_add(1);
        }
    }
    t.finished.fetch_add(1);
}

// One phase: fresh clients, the waiters spread over them, run until every waiter returned.
bool run_phase(const args& a, const std::vector<std::string>& nodes, int seconds, int phase) {
    asio::io_context ioc;
    std::vector<std::unique_ptr<redlock::client>> clients;
    redlock::client_config cfg;
    cfg.nodes = nodes;
    cfg.restart_quarantine = false;  // servers started empty a moment ago
    cfg.node_timeout = 1000ms;       // a loaded machine: slowness is not the fault under test
    for (int i = 0; i < a.clients; ++i)
        clients.push_back(std::make_unique<redlock::client>(ioc.get_executor(), cfg));
    std::vector<std::atomic<int>> holders(static_cast<std::size_t>(a.resources));
    tally t;
    const auto start = steady::now();
    const auto deadline = start + std::chrono::seconds(seconds);
    for (int w = 0; w < a.waiters; ++w) {
        auto& client = *clients[static_cast<std::size_t>(w % a.clients)];
        asio::co_spawn(ioc, waiter(client, holders, t, deadline, static_cast<unsigned>(phase * 1000003 + w)),
                       asio::detached);
    }
    // Two threads: the clients' strands keep each client's state on one at a time.
    std::thread helper([&] {
        while (t.finished.load() < static_cast<std::uint64_t>(a.waiters) && steady::now() < deadline + 30s)
            ioc.run_for(100ms);
    });
    while (t.finished.load() < static_cast<std::uint64_t>(a.waiters) && steady::now() < deadline + 30s)
        ioc.run_for(100ms);
    helper.join();
    // Cleanups of failed attempts go out in the background: let them be answered.
    ioc.run_for(1s);
    const double took = std::chrono::duration<double>(steady::now() - start).count();
    const auto finished = t.finished.load();
    std::printf(
        "phase %d: %d clients, %d waiters on %d resources, %.1f s: %llu acquired (%.0f/s), "
        "%llu wait timeouts, %llu other errors, %llu overlaps, %llu of %d waiters returned\n",
        phase, a.clients, a.waiters, a.resources, took, static_cast<unsigned long long>(t.acquired.load()),
        static_cast<double>(t.acquired.load()) / took, static_cast<unsigned long long>(t.timed_out.load()),
        static_cast<unsigned long long>(t.other_errors.load()),
        static_cast<unsigned long long>(t.overlaps.load()), static_cast<unsigned long long>(finished),
        a.waiters);
    if (!t.first_error.empty()) std::printf("  first error: %s\n", t.first_error.c_str());
    // Where the work went: rounds (each a script call per node, and a cleanup when refused) and
    // release messages that woke a waiter, per lease granted.
    std::uint64_t rounds = 0, contended = 0, wakeups = 0;
    for (const auto& c : clients) {
        const auto m = c->metrics();
        rounds += m.attempts;
        contended += m.contended;
        wakeups += m.release_wakeups;
    }
    const double per = static_cast<double>(std::max<std::uint64_t>(t.acquired.load(), 1));
    std::printf("  per lease granted: %.1f rounds (%.1f refused), %.1f wake-ups by a release message\n",
                static_cast<double>(rounds) / per, static_cast<double>(contended) / per,
                static_cast<double>(wakeups) / per);
    // Closed as an application closes them: what they listed on the servers is taken off.
    std::size_t closed = 0;
    for (auto& c : clients)
        c->async_close([&closed](boost::system::error_code) { ++closed; });
    const auto close_deadline = steady::now() + 30s;
    while (closed < clients.size() && steady::now() < close_deadline)
        ioc.run_for(100ms);
    clients.clear();
    return finished == static_cast<std::uint64_t>(a.waiters) && t.other_errors.load() == 0 &&
           t.overlaps.load() == 0 && t.acquired.load() > 0;
}

}  // namespace

int main(int argc, char** argv) {
    args a;
    if (!parse(argc, argv, a)) {
        std::fprintf(
            stderr,
            "usage: stress [--seconds S (>= 2)] [--clients C] [--waiters W] [--resources R] [--nodes N]\n");
        return 2;
    }
    // Each client has a command and a subscriber connection per node; the servers need theirs.
    const auto needed = static_cast<rlim_t>(a.clients) * static_cast<rlim_t>(a.nodes) * 2 + 256;
    rlimit files{};
    getrlimit(RLIMIT_NOFILE, &files);
    if (files.rlim_cur < needed) {
        files.rlim_cur = std::min(files.rlim_max, needed);
        setrlimit(RLIMIT_NOFILE, &files);
    }
    if (files.rlim_cur < needed) {
        std::fprintf(stderr, "stress: needs %llu open files, the limit is %llu (ulimit -n)\n",
                     static_cast<unsigned long long>(needed),
                     static_cast<unsigned long long>(files.rlim_cur));
        return 2;
    }
    try {
        redlock::test::redis_server_options opts;
        opts.extra_args = {"--maxclients", std::to_string(a.clients * 2 + 100)};
        auto servers = redlock::test::start_redis_servers(static_cast<std::size_t>(a.nodes), opts);
        std::vector<std::string> nodes;
        std::vector<server_state> before;
        for (const auto& s : servers) {
            nodes.push_back(s->uri());
            before.push_back(state_of(*s));
        }
        const auto files_before = open_files();
        bool ok = true;
        std::size_t resident_after_first = 0;
        for (int phase = 1; phase <= 2; ++phase) {
            ok = run_phase(a, nodes, a.seconds / 2, phase) && ok;
            const auto files_now = open_files();
            const auto resident = resident_bytes();
            if (phase == 1) resident_after_first = resident;
            std::printf("  after phase %d: %zu open files (%zu before), resident %.1f MiB\n", phase,
                        files_now, files_before, static_cast<double>(resident) / (1 << 20));
            if (files_now != files_before) {
                std::printf("  FAIL: open files %zu, were %zu\n", files_now, files_before);
                ok = false;
            }
            for (std::size_t i = 0; i < servers.size(); ++i) {
                // A server drops a closed connection when it next reads from it: give it a moment.
                server_state now;
                for (int tries = 0; tries < 50; ++tries) {
                    now = state_of(*servers[i]);
                    if (now.clients <= before[i].clients && now.channels == 0) break;
                    std::this_thread::sleep_for(100ms);
                }
                if (now.clients > before[i].clients || now.keys != 0 || now.channels != 0) {
                    std::printf("  FAIL: node %zu has %lld clients (%lld before), %lld keys, %lld channels\n",
                                i, static_cast<long long>(now.clients),
                                static_cast<long long>(before[i].clients), static_cast<long long>(now.keys),
                                static_cast<long long>(now.channels));
                    ok = false;
                }
            }
        }
        const auto resident = resident_bytes();
        const auto allowed = resident_after_first + resident_after_first / 10 + (16u << 20);
        if (resident > allowed) {
            std::printf("FAIL: resident %.1f MiB after phase 2, %.1f MiB after phase 1\n",
                        static_cast<double>(resident) / (1 << 20),
                        static_cast<double>(resident_after_first) / (1 << 20));
            ok = false;
        }
        std::printf("%s\n", ok ? "stress: passed" : "stress: FAILED");
        return ok ? 0 : 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "stress: %s\n", e.what());
        return 1;
    }
}
