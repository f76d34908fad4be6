// SPDX-License-Identifier: BSL-1.0
// The measurement of bench/lock_bench.cpp (uncontended acquire + release pairs through the
// public API), shared with `redlock bench`.
#ifndef REDLOCK_BENCH_LOCK_PAIRS_HPP
#define REDLOCK_BENCH_LOCK_PAIRS_HPP

#include "process_cpu.hpp"
#include <redlock/redlock.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <exception>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace lock_pairs {

namespace asio = boost::asio;
using clock_type = std::chrono::steady_clock;

inline constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

struct bench_state {
    redlock::client* client = nullptr;
    redlock::lock_options options;
    int concurrency = 1;

    // The phase being run.
    bool measuring = false;
    std::uint64_t warmup_left = 0;    // warm-up: pairs not yet started
    clock_type::time_point deadline;  // measured phase: no pair starts after this
    int active = 0;                   // workers still running in this phase
    asio::steady_timer* phase_done = nullptr;

    // Measured phase.
    std::vector<std::int64_t> acquire_ns;  // every successful acquire
    std::vector<std::int64_t> release_ns;  // every successful release
    std::uint64_t pairs = 0;
    std::uint64_t acquire_failures = 0;
    std::uint64_t release_failures = 0;
    double cpu_seconds_at_start = 0, cpu_seconds_at_end = 0;  // bench::process_cpu_seconds()
    // Warm-up.
    std::uint64_t warmup_pairs = 0;
    std::uint64_t warmup_failures = 0;
    // Both phases: "acquire: <message>" / "release: <message>" -> count.
    std::map<std::string, std::uint64_t> errors;
};

inline bool keep_going(const bench_state& st) {
    if (st.measuring) return clock_type::now() < st.deadline;
    return st.warmup_left > 0;
}

inline asio::awaitable<void> worker(bench_state* st, int id) {
    const std::string prefix = "bench:" + std::to_string(id) + ":";
    std::uint64_t n = 0;
    std::string resource;
    while (keep_going(*st)) {
        if (!st->measuring) --st->warmup_left;
        resource = prefix;
        resource += std::to_string(n++);

        const auto t0 = clock_type::now();
        auto acquire = st->client->async_acquire(resource, st->options, use_tuple);
        auto [aec, held] = co_await std::move(acquire);
        const auto t1 = clock_type::now();
        if (aec) {
            ++(st->measuring ? st->acquire_failures : st->warmup_failures);
            ++st->errors["acquire: " + aec.message()];
            continue;
        }
        auto release = held.async_release(use_tuple);
        auto [rec] = co_await std::move(release);
        const auto t2 = clock_type::now();
        if (rec) {
            ++(st->measuring ? st->release_failures : st->warmup_failures);
            ++st->errors["release: " + rec.message()];
            continue;
        }
        if (st->measuring) {
            st->acquire_ns.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count());
            st->release_ns.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(t2 - t1).count());
            ++st->pairs;
        } else {
            ++st->warmup_pairs;
        }
    }
}

// Runs one phase: C workers, returns when the last one is done.
inline asio::awaitable<void> run_phase(bench_state* st) {
    st->active = st->concurrency;
    for (int i = 0; i < st->concurrency; ++i) {
        auto w = worker(st, i);
        asio::co_spawn(st->client->get_executor(), std::move(w), [st](std::exception_ptr ep) {
            if (ep) std::rethrow_exception(ep);
            if (--st->active == 0) st->phase_done->cancel();
        });
    }
    // phase_done is a condition variable: it never expires, the last worker cancels it.
    while (st->active > 0) {
        st->phase_done->expires_at(clock_type::time_point::max());
        auto wait = st->phase_done->async_wait(use_tuple);
        co_await std::move(wait);
    }
}

// The warm-up (not measured: connects, first allocations), then the measured phase.
inline asio::awaitable<void> run_all(bench_state* st, std::uint64_t warmup_pairs, double seconds,
                                     clock_type::time_point* start, clock_type::time_point* end,
                                     std::optional<redlock::client>* client,
                                     redlock::metrics_snapshot* snapshot) {
    st->measuring = false;
    st->warmup_left = warmup_pairs;
    auto warmup = run_phase(st);
    co_await std::move(warmup);
    st->measuring = true;
    st->cpu_seconds_at_start = bench::process_cpu_seconds();
    *start = clock_type::now();
    st->deadline =
        *start + std::chrono::duration_cast<clock_type::duration>(std::chrono::duration<double>(seconds));
    auto measured = run_phase(st);
    co_await std::move(measured);
    *end = clock_type::now();
    st->cpu_seconds_at_end = bench::process_cpu_seconds();
    *snapshot = (*client)->metrics();
    st->client = nullptr;
    client->reset();
}

// Nearest-rank quantile of sorted samples, in microseconds.
inline double quantile_us(const std::vector<std::int64_t>& sorted, double q) {
    if (sorted.empty()) return 0.0;
    auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size())));
    rank = std::clamp<std::size_t>(rank, 1, sorted.size());
    return static_cast<double>(sorted[rank - 1]) / 1000.0;
}

/// One run's figures (see the file comment of bench/lock_bench.cpp).
struct result {
    std::size_t nodes = 0;
    int concurrency = 0;
    int permits = 0;
    double seconds = 0;
    std::uint64_t pairs = 0;
    double pairs_per_s = 0;
    double acquire_p50_us = 0, acquire_p99_us = 0, acquire_max_us = 0;
    double release_p50_us = 0, release_p99_us = 0;
    double client_cpu_us_per_pair = 0;  // this process's CPU over the measured phase, per pair
    std::uint64_t acquire_failures = 0, release_failures = 0;
    std::uint64_t warmup_pairs = 0, warmup_failures = 0;
    std::map<std::string, std::uint64_t> errors;
    std::string client_metrics_json;

    [[nodiscard]] nlohmann::json to_json() const {
        nlohmann::json errs = nlohmann::json::object();
        for (const auto& [what, count] : errors)
            errs[what] = count;
        return {{"nodes", nodes},
                {"concurrency", concurrency},
                {"permits", permits},
                {"seconds", seconds},
                {"pairs", pairs},
                {"pairs_per_s", pairs_per_s},
                {"acquire_p50_us", acquire_p50_us},
                {"acquire_p99_us", acquire_p99_us},
                {"acquire_max_us", acquire_max_us},
                {"release_p50_us", release_p50_us},
                {"release_p99_us", release_p99_us},
                {"client_cpu_us_per_pair", client_cpu_us_per_pair},
                {"acquire_failures", acquire_failures},
                {"release_failures", release_failures},
                {"failures", acquire_failures + release_failures},
                {"warmup_pairs", warmup_pairs},
                {"warmup_failures", warmup_failures},
                {"errors", errs},
                {"client_metrics", nlohmann::json::parse(client_metrics_json)}};
    }
};

/// Runs the warm-up and `seconds` of acquire + release pairs from `concurrency` coroutines on
/// one client over `nodes` (servers started empty: no restart quarantine). `permits` > 0 takes
/// each pair as one permit of a semaphore of that many (lock_options::permits), 0 a lock. Throws
/// on a broken configuration; failed pairs are counted, not thrown.
inline result measure(const std::vector<std::string>& nodes, int concurrency, double seconds,
                      std::uint64_t warmup, int permits = 0) {
    asio::io_context ioc(1);
    redlock::client_config cfg;
    cfg.nodes = nodes;
    cfg.key_prefix = "redlock:";
    cfg.restart_quarantine = false;  // bench/run_lock_bench starts the servers empty just before
    // Generous: on a loaded 2-core machine a slow reply must not turn into a failure.
    cfg.node_timeout = std::chrono::milliseconds(1000);
    cfg.connect_timeout = std::chrono::milliseconds(2000);
    // Destroyed by run_all when the measured phase is over: that closes the connections, and
    // ioc.run() returns once nothing is left to do.
    std::optional<redlock::client> client(std::in_place, ioc.get_executor(), cfg);

    bench_state st;
    st.client = &*client;
    st.options.ttl = std::chrono::milliseconds(10000);
    st.options.wait = std::chrono::milliseconds(0);
    st.options.node_timeout = std::chrono::milliseconds(1000);
    st.options.permits = permits;
    st.concurrency = concurrency;
    asio::steady_timer phase_done(ioc);
    st.phase_done = &phase_done;
    st.acquire_ns.reserve(static_cast<std::size_t>(std::min(seconds, 60.0) * 200000.0));
    st.release_ns.reserve(st.acquire_ns.capacity());

    clock_type::time_point start;
    clock_type::time_point end;
    redlock::metrics_snapshot snapshot;
    auto main_op = run_all(&st, warmup, seconds, &start, &end, &client, &snapshot);
    asio::co_spawn(ioc, std::move(main_op), [](std::exception_ptr ep) {
        if (ep) std::rethrow_exception(ep);
    });
    ioc.run();

    const double elapsed = std::chrono::duration<double>(end - start).count();
    std::sort(st.acquire_ns.begin(), st.acquire_ns.end());
    std::sort(st.release_ns.begin(), st.release_ns.end());
    result r;
    r.nodes = nodes.size();
    r.concurrency = concurrency;
    r.permits = permits;
    r.seconds = elapsed;
    r.pairs = st.pairs;
    r.pairs_per_s = elapsed > 0 ? static_cast<double>(st.pairs) / elapsed : 0.0;
    r.acquire_p50_us = quantile_us(st.acquire_ns, 0.50);
    r.acquire_p99_us = quantile_us(st.acquire_ns, 0.99);
    r.acquire_max_us = st.acquire_ns.empty() ? 0.0 : static_cast<double>(st.acquire_ns.back()) / 1000.0;
    r.release_p50_us = quantile_us(st.release_ns, 0.50);
    r.release_p99_us = quantile_us(st.release_ns, 0.99);
    if (st.pairs > 0)
        r.client_cpu_us_per_pair =
            (st.cpu_seconds_at_end - st.cpu_seconds_at_start) * 1e6 / static_cast<double>(st.pairs);
    r.acquire_failures = st.acquire_failures;
    r.release_failures = st.release_failures;
    r.warmup_pairs = st.warmup_pairs;
    r.warmup_failures = st.warmup_failures;
    r.errors = st.errors;
    r.client_metrics_json = snapshot.to_json();
    return r;
}

}  // namespace lock_pairs

#endif
