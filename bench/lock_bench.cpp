// Uncontended acquire + release pairs through the public lock API, on servers you started.
//
//   lock_bench --nodes URI[,URI...] [--concurrency C] [--seconds S] [--warmup PAIRS] [--json]
//
// One redlock::client on one io_context run by one thread; C coroutines, each looping
// acquire (ttl 10 s, wait 0) then release of a resource of its own ("bench:<worker>:<n>", a new
// one each pair, so nobody ever contends and a failed release cannot make the next acquire
// fail) until S seconds have passed. Before that, a warm-up of PAIRS pairs (connect, first
// allocations) that is not measured.
//
// Prints pairs/s (pairs completed / time from the start until the last worker finished its last
// pair), the exact p50/p99/max of every successful acquire's latency (steady_clock around the
// co_await, so what a caller sees), the same for the releases, and every failed acquire or
// release with its error.
// Failures do not stop the run and do not change the exit code (0 whenever the run completed);
// bad arguments exit 2, a crash 1.
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
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace asio = boost::asio;
using clock_type = std::chrono::steady_clock;

namespace {

constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

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
    // Warm-up.
    std::uint64_t warmup_pairs = 0;
    std::uint64_t warmup_failures = 0;
    // Both phases: "acquire: <message>" / "release: <message>" -> count.
    std::map<std::string, std::uint64_t> errors;
};

bool keep_going(const bench_state& st) {
    if (st.measuring) return clock_type::now() < st.deadline;
    return st.warmup_left > 0;
}

asio::awaitable<void> worker(bench_state* st, int id) {
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
asio::awaitable<void> run_phase(bench_state* st) {
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
asio::awaitable<void> run_all(bench_state* st, std::uint64_t warmup_pairs, double seconds,
                              clock_type::time_point* start, clock_type::time_point* end,
                              std::optional<redlock::client>* client, redlock::metrics_snapshot* snapshot) {
    st->measuring = false;
    st->warmup_left = warmup_pairs;
    auto warmup = run_phase(st);
    co_await std::move(warmup);
    st->measuring = true;
    *start = clock_type::now();
    st->deadline =
        *start + std::chrono::duration_cast<clock_type::duration>(std::chrono::duration<double>(seconds));
    auto measured = run_phase(st);
    co_await std::move(measured);
    *end = clock_type::now();
    *snapshot = (*client)->metrics();
    st->client = nullptr;
    client->reset();
}

// Nearest-rank quantile of sorted samples, in microseconds.
double quantile_us(const std::vector<std::int64_t>& sorted, double q) {
    if (sorted.empty()) return 0.0;
    auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size())));
    rank = std::clamp<std::size_t>(rank, 1, sorted.size());
    return static_cast<double>(sorted[rank - 1]) / 1000.0;
}

std::vector<std::string> split_nodes(const std::string& list) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start <= list.size()) {
        auto comma = list.find(',', start);
        if (comma == std::string::npos) comma = list.size();
        if (comma > start) out.push_back(list.substr(start, comma - start));
        start = comma + 1;
    }
    return out;
}

int usage() {
    std::cerr << "usage: lock_bench --nodes URI[,URI...] [--concurrency C] [--seconds S] [--warmup PAIRS] "
                 "[--json]\n";
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> nodes;
    int concurrency = 1;
    double seconds = 5.0;
    std::uint64_t warmup = 500;
    bool json = false;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--json") {
            json = true;
        } else if (arg == "--nodes" && i + 1 < argc) {
            nodes = split_nodes(argv[++i]);
        } else if (arg == "--concurrency" && i + 1 < argc) {
            concurrency = std::atoi(argv[++i]);
        } else if (arg == "--seconds" && i + 1 < argc) {
            seconds = std::strtod(argv[++i], nullptr);
        } else if (arg == "--warmup" && i + 1 < argc) {
            warmup = std::strtoull(argv[++i], nullptr, 10);
        } else {
            return usage();
        }
    }
    if (nodes.empty() || concurrency <= 0 || !(seconds > 0.0) || seconds > 3600.0) {
        std::cerr << "lock_bench: --nodes is required; --concurrency and --seconds (at most 3600) must be "
                     "positive\n";
        return usage();
    }

    try {
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
        const double rate = elapsed > 0 ? static_cast<double>(st.pairs) / elapsed : 0.0;
        const double p50 = quantile_us(st.acquire_ns, 0.50);
        const double p99 = quantile_us(st.acquire_ns, 0.99);
        const double max = st.acquire_ns.empty() ? 0.0 : static_cast<double>(st.acquire_ns.back()) / 1000.0;
        const double release_p50 = quantile_us(st.release_ns, 0.50);
        const double release_p99 = quantile_us(st.release_ns, 0.99);
        const std::uint64_t failures = st.acquire_failures + st.release_failures;

        if (json) {
            nlohmann::json errors = nlohmann::json::object();
            for (const auto& [what, count] : st.errors)
                errors[what] = count;
            nlohmann::json report = {{"nodes", nodes.size()},
                                     {"concurrency", concurrency},
                                     {"seconds", elapsed},
                                     {"pairs", st.pairs},
                                     {"pairs_per_s", rate},
                                     {"acquire_p50_us", p50},
                                     {"acquire_p99_us", p99},
                                     {"acquire_max_us", max},
                                     {"release_p50_us", release_p50},
                                     {"release_p99_us", release_p99},
                                     {"acquire_failures", st.acquire_failures},
                                     {"release_failures", st.release_failures},
                                     {"failures", failures},
                                     {"warmup_pairs", st.warmup_pairs},
                                     {"warmup_failures", st.warmup_failures},
                                     {"errors", errors},
                                     {"client_metrics", nlohmann::json::parse(snapshot.to_json())}};
            std::cout << report.dump() << "\n";
        } else {
            std::printf(
                "lock_bench N=%zu C=%d: %.0f pairs/s (%llu pairs in %.2f s), "
                "acquire p50 %.1f us, p99 %.1f us, max %.1f us; release p50 %.1f us, p99 %.1f us; "
                "failures %llu (acquire %llu, release %llu; warm-up: %llu failed of %llu)\n",
                nodes.size(), concurrency, rate, static_cast<unsigned long long>(st.pairs), elapsed, p50, p99,
                max, release_p50, release_p99, static_cast<unsigned long long>(failures),
                static_cast<unsigned long long>(st.acquire_failures),
                static_cast<unsigned long long>(st.release_failures),
                static_cast<unsigned long long>(st.warmup_failures),
                static_cast<unsigned long long>(st.warmup_pairs + st.warmup_failures));
            for (const auto& [what, count] : st.errors)
                std::printf("  %llu x %s\n", static_cast<unsigned long long>(count), what.c_str());
        }
    } catch (const std::exception& e) {
        std::cerr << "lock_bench: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
