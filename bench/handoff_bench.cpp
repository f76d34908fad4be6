// SPDX-License-Identifier: BSL-1.0
// Hand-off of a contended lock: how long from the holder's release until the next waiter holds
// it, and how many holds per second C waiters get out of one lock.
//
//   handoff_bench --nodes URI[,URI...] [--waiting notify|spin] [--retry-ms R] [--handoffs K]
//                 [--contenders C] [--seconds S] [--fair 1] [--hot 1] [--permits K] [--locks L]
//
// Prints one JSON line. Hand-off: a holder client acquires, a waiter client starts a waiting
// acquire, 2 ms later the holder releases; latency = from just before the release is sent until
// the waiter's acquire completes, K times. Contended: C coroutines of one client loop
// acquire (waiting) -> release for S seconds. Spinning waiters retry every R ms (retry.min =
// retry.max = R), the way redsync and node-redlock poll. --fair 1: every acquire is fair.
// --hot 1 (waiting by pub/sub only): instead of sleeping 2 ms, the holder releases as soon as the
// waiter waits (its subscription, and with --fair its place in the queue, show on every node),
// found by polling the nodes: machine and servers stay busy, as under a real load, where the
// 2 ms of idleness lets the CPUs fall asleep and costs a cold wake-up per step (see
// docs/benchmarks.md).
// --permits K: every acquire takes one permit of a semaphore of K (lock_options::permits). The
// holder then takes all K before the waiter waits, and releases one of them (with --hot too: the
// waiter subscribes to the same released channel; not with --fair, which no semaphore is).
// The contended phase also times its hand-offs: a permit (the lock, K = 1) freed by a release
// goes to the next acquire that completes, so each completed acquire, once the first K went to
// free permits, is matched with the oldest release not matched yet (started before it), from
// just before that release is sent. At most K releases can be waiting for a taker at once; older
// ones are dropped unmatched (with N > 1 a semaphore can briefly admit more than K, and a release
// of such a surplus hold frees no permit anybody waits for).
// --locks L: the contended phase spreads its C waiters over L resources (waiter c on resource
// c mod L), so that L locks of C / L waiters each put the load of a semaphore of L permits on the
// same servers and client, each lock's hand-offs matched on their own.
#include <redlock/redis/connection.hpp>
#include <redlock/redlock.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace asio = boost::asio;
using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

namespace {

constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);

struct settings {
    std::vector<std::string> nodes;
    redlock::wait_strategy waiting = redlock::wait_strategy::notify;
    int retry_ms = 10;
    int handoffs = 2000;
    int contenders = 50;
    double seconds = 5.0;
    bool fair = false;
    bool hot = false;
    int permits = 0;
    int locks = 1;
};

struct results {
    std::vector<double> handoff_us;
    std::vector<double> contended_handoff_us;
    std::uint64_t holds = 0;
    std::uint64_t failures = 0;
    double contended_seconds = 0;
    bool done = false;
};

double quantile(std::vector<double> v, double q) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    auto rank = static_cast<std::size_t>(q * static_cast<double>(v.size()));
    return v[std::min(rank, v.size() - 1)];
}

asio::awaitable<void> sleep_for(clock_type::duration d) {
    asio::steady_timer t(co_await asio::this_coro::executor, d);
    co_await t.async_wait(tuple_awaitable);
}

// Whether the waiter now waits, seen on every node: subscribed to the resource's released
// channel (or, fair, to a wake channel, and queued).
asio::awaitable<bool> waiter_waits(std::vector<std::unique_ptr<redlock::redis::connection>>& probes,
                                   bool fair) {
    const std::string tag = "{redlock:bench:handoff}";
    redlock::resp::request req;
    if (fair) {
        req.push("PUBSUB", "SHARDCHANNELS", tag + ":wake:*");
        req.push("ZCARD", tag + ":queue");
    } else {
        req.push("PUBSUB", "SHARDNUMSUB", tag + ":released");
    }
    for (auto& p : probes) {
        auto [ec, v] = co_await p->async_exec(req, 1000ms, tuple_awaitable);
        if (ec || v.size() != req.size()) co_return false;
        const bool waits = fair ? !v[0].elements.empty() && v[1].integer >= 1
                                : v[0].elements.size() == 2 && v[0].elements[1].integer >= 1;
        if (!waits) co_return false;
    }
    co_return true;
}

asio::awaitable<void> run(redlock::client& holder, redlock::client& waiter,
                          std::vector<std::unique_ptr<redlock::redis::connection>>& probes, const settings& s,
                          results& r) {
    redlock::lock_options plain;
    plain.fair = s.fair;
    plain.permits = s.permits;
    redlock::lock_options waiting;
    waiting.fair = s.fair;
    waiting.permits = s.permits;
    waiting.wait = 10s;
    waiting.waiting = s.waiting;
    waiting.retry =
        redlock::retry_config{std::chrono::milliseconds(s.retry_ms), std::chrono::milliseconds(s.retry_ms)};

    const int slots = std::max(1, s.permits);
    for (int i = 0; i < s.handoffs; ++i) {
        // The holder takes every permit (the lock), so that the waiter waits for a release.
        std::vector<redlock::lease> others;
        redlock::lease held;
        bool all = true;
        for (int k = 0; k < slots && all; ++k) {
            auto [ec, l] = co_await holder.async_acquire("bench:handoff", plain, tuple_awaitable);
            if (ec) {
                all = false;
            } else if (k + 1 < slots) {
                others.push_back(std::move(l));
            } else {
                held = std::move(l);
            }
        }
        if (!all) {
            ++r.failures;
            for (auto& l : others)
                co_await l.async_release(tuple_awaitable);
            continue;
        }
        std::optional<clock_type::time_point> got_at;
        redlock::lease got;
        // Woken by a cancel when the waiter gets the lock: no polling that would compete with it.
        asio::steady_timer acquired(co_await asio::this_coro::executor, clock_type::time_point::max());
        waiter.async_acquire("bench:handoff", waiting, [&](boost::system::error_code e, redlock::lease l) {
            if (e) ++r.failures;
            got_at = clock_type::now();
            got = std::move(l);
            acquired.cancel();
        });
        if (s.hot) {
            while (!got_at && !co_await waiter_waits(probes, s.fair)) {
            }
        } else {
            co_await sleep_for(2ms);  // the waiter's first attempt has failed: it waits
        }
        const auto released_at = clock_type::now();
        co_await held.async_release(tuple_awaitable);
        if (!got_at) co_await acquired.async_wait(tuple_awaitable);
        if (got.held()) {
            r.handoff_us.push_back(std::chrono::duration<double, std::micro>(*got_at - released_at).count());
            co_await got.async_release(tuple_awaitable);
        }
        for (auto& l : others)
            co_await l.async_release(tuple_awaitable);
    }

    // Contended throughput: C waiters on --locks resources, waiter c on resource c mod L, each
    // resource's releases matched with its own acquires.
    const auto start = clock_type::now();
    const auto end =
        start + std::chrono::duration_cast<clock_type::duration>(std::chrono::duration<double>(s.seconds));
    int running = s.contenders;
    struct contended_resource {
        std::string name;
        int free_permits = 0;  // the first acquires take free permits: no release to match them with
        std::deque<clock_type::time_point> released;  // releases not matched with an acquire yet
    };
    std::vector<contended_resource> resources(static_cast<std::size_t>(s.locks));
    for (std::size_t i = 0; i < resources.size(); ++i) {
        resources[i].name = s.locks == 1 ? "bench:contended" : "bench:contended:" + std::to_string(i);
        resources[i].free_permits = slots;
    }
    auto ex = co_await asio::this_coro::executor;
    for (int c = 0; c < s.contenders; ++c) {
        asio::co_spawn(
            ex,
            [&, &res = resources[static_cast<std::size_t>(c % s.locks)]]() -> asio::awaitable<void> {
                while (clock_type::now() < end) {
                    auto [ec, l] = co_await waiter.async_acquire(res.name, waiting, tuple_awaitable);
                    if (ec) {
                        ++r.failures;
                        continue;
                    }
                    const auto got_at = clock_type::now();
                    while (res.released.size() > static_cast<std::size_t>(slots))
                        res.released.pop_front();
                    if (res.free_permits > 0) {
                        --res.free_permits;
                    } else if (!res.released.empty()) {
                        r.contended_handoff_us.push_back(
                            std::chrono::duration<double, std::micro>(got_at - res.released.front()).count());
                        res.released.pop_front();
                    }
                    ++r.holds;
                    res.released.push_back(clock_type::now());
                    co_await l.async_release(tuple_awaitable);
                }
                --running;
            },
            asio::detached);
    }
    while (running > 0)
        co_await sleep_for(1ms);
    r.contended_seconds = std::chrono::duration<double>(clock_type::now() - start).count();
    r.done = true;
}

int usage() {
    std::fprintf(
        stderr,
        "usage: handoff_bench --nodes URI[,URI...] [--waiting notify|spin] [--retry-ms R] "
        "[--handoffs K] [--contenders C] [--seconds S] [--fair 1] [--hot 1] [--permits K] [--locks L]\n");
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    settings s;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string flag = argv[i], value = argv[i + 1];
        if (flag == "--nodes") {
            for (std::size_t start = 0; start <= value.size();) {
                auto comma = std::min(value.find(',', start), value.size());
                s.nodes.push_back(value.substr(start, comma - start));
                start = comma + 1;
            }
        } else if (flag == "--waiting" && (value == "notify" || value == "spin")) {
            s.waiting = value == "spin" ? redlock::wait_strategy::spin : redlock::wait_strategy::notify;
        } else if (flag == "--retry-ms") {
            s.retry_ms = std::atoi(value.c_str());
        } else if (flag == "--handoffs") {
            s.handoffs = std::atoi(value.c_str());
        } else if (flag == "--contenders") {
            s.contenders = std::atoi(value.c_str());
        } else if (flag == "--fair" || flag == "--hot") {
            (flag == "--fair" ? s.fair : s.hot) = value == "1";
        } else if (flag == "--locks") {
            s.locks = std::atoi(value.c_str());
        } else if (flag == "--permits") {
            s.permits = std::atoi(value.c_str());
        } else if (flag == "--seconds") {
            s.seconds = std::strtod(value.c_str(), nullptr);
        } else {
            return usage();
        }
    }
    if (argc % 2 == 0 || s.nodes.empty() || s.retry_ms <= 0 || s.handoffs <= 0 || s.contenders <= 0 ||
        !(s.seconds > 0) || s.seconds > 600 || (s.hot && s.waiting != redlock::wait_strategy::notify) ||
        s.permits < 0 || (s.permits > 0 && s.fair) || s.locks < 1 || s.locks > s.contenders) {
        return usage();
    }
    try {
        asio::io_context ioc(1);
        redlock::client_config cfg;
        cfg.nodes = s.nodes;
        cfg.node_timeout = 1000ms;
        cfg.restart_quarantine = false;  // bench/run_lock_bench starts the servers empty just before
        redlock::client holder(ioc.get_executor(), cfg);
        redlock::client waiter(ioc.get_executor(), cfg);
        std::vector<std::unique_ptr<redlock::redis::connection>> probes;
        if (s.hot) {
            for (const auto& uri : s.nodes) {
                redlock::redis::connection_config cc;
                std::string why;
                if (auto ec = redlock::redis::parse_node_uri(uri, cc.address, why)) {
                    std::fprintf(stderr, "handoff_bench: %s\n", why.c_str());
                    return 2;
                }
                probes.push_back(std::make_unique<redlock::redis::connection>(ioc.get_executor(), cc));
                probes.back()->async_connect([](boost::system::error_code) {});
            }
        }
        results r;
        asio::co_spawn(ioc, run(holder, waiter, probes, s, r), [&](std::exception_ptr ep) {
            if (ep) std::rethrow_exception(ep);
        });
        while (!r.done)
            ioc.run_one_for(100ms);
        const auto m = waiter.metrics();
        if (std::getenv("HANDOFF_METRICS")) std::fprintf(stderr, "%s\n", m.to_json().c_str());
        std::printf(
            "{\"nodes\": %zu, \"waiting\": \"%s\", \"fair\": %s, \"hot\": %s, \"retry_ms\": %d, "
            "\"handoffs\": %zu, \"handoff_p50_us\": "
            "%.1f, "
            "\"handoff_p99_us\": %.1f, \"contenders\": %d, \"holds_per_s\": %.1f, \"failures\": %llu, "
            "\"release_wakeups\": %llu, \"attempts\": %llu, \"permits\": %d, \"locks\": %d, "
            "\"contended_handoffs\": %zu, "
            "\"contended_handoff_p50_us\": %.1f, \"contended_handoff_p99_us\": %.1f}\n",
            s.nodes.size(), s.waiting == redlock::wait_strategy::spin ? "spin" : "notify",
            s.fair ? "true" : "false", s.hot ? "true" : "false", s.retry_ms, r.handoff_us.size(),
            quantile(r.handoff_us, 0.5), quantile(r.handoff_us, 0.99), s.contenders,
            static_cast<double>(r.holds) / r.contended_seconds, static_cast<unsigned long long>(r.failures),
            static_cast<unsigned long long>(m.release_wakeups), static_cast<unsigned long long>(m.attempts),
            s.permits, s.locks, r.contended_handoff_us.size(), quantile(r.contended_handoff_us, 0.5),
            quantile(r.contended_handoff_us, 0.99));
        return r.failures == 0 ? 0 : 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "handoff_bench: %s\n", e.what());
        return 1;
    }
}
