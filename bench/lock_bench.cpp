// SPDX-License-Identifier: BSL-1.0
// Uncontended acquire + release pairs through the public lock API, on servers you started.
//
//   lock_bench --nodes URI[,URI...] [--concurrency C] [--seconds S] [--warmup PAIRS] [--permits K]
//              [--json]
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
#include "lock_pairs.hpp"
#include <redlock/redis/node_spec.hpp>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

namespace {

int usage() {
    std::cerr << "usage: lock_bench --nodes URI[,URI...] [--concurrency C] [--seconds S] [--warmup PAIRS] "
                 "[--permits K] [--json]\n";
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> nodes;
    int concurrency = 1;
    double seconds = 5.0;
    std::uint64_t warmup = 500;
    int permits = 0;
    bool json = false;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--json") {
            json = true;
        } else if (arg == "--nodes" && i + 1 < argc) {
            nodes = redlock::redis::split_node_list(argv[++i]);
        } else if (arg == "--concurrency" && i + 1 < argc) {
            concurrency = std::atoi(argv[++i]);
        } else if (arg == "--seconds" && i + 1 < argc) {
            seconds = std::strtod(argv[++i], nullptr);
        } else if (arg == "--warmup" && i + 1 < argc) {
            warmup = std::strtoull(argv[++i], nullptr, 10);
        } else if (arg == "--permits" && i + 1 < argc) {
            permits = std::atoi(argv[++i]);
        } else {
            return usage();
        }
    }
    if (nodes.empty() || concurrency <= 0 || !(seconds > 0.0) || seconds > 3600.0 || permits < 0) {
        std::cerr << "lock_bench: --nodes is required; --concurrency and --seconds (at most 3600) must be "
                     "positive, --permits not negative\n";
        return usage();
    }

    try {
        const auto r = lock_pairs::measure(nodes, concurrency, seconds, warmup, permits);
        if (json) {
            std::cout << r.to_json().dump() << "\n";
        } else {
            std::printf(
                "lock_bench N=%zu C=%d K=%d: %.0f pairs/s (%llu pairs in %.2f s), "
                "acquire p50 %.1f us, p99 %.1f us, max %.1f us; release p50 %.1f us, p99 %.1f us; "
                "failures %llu (acquire %llu, release %llu; warm-up: %llu failed of %llu)\n",
                r.nodes, r.concurrency, r.permits, r.pairs_per_s, static_cast<unsigned long long>(r.pairs),
                r.seconds, r.acquire_p50_us, r.acquire_p99_us, r.acquire_max_us, r.release_p50_us,
                r.release_p99_us, static_cast<unsigned long long>(r.acquire_failures + r.release_failures),
                static_cast<unsigned long long>(r.acquire_failures),
                static_cast<unsigned long long>(r.release_failures),
                static_cast<unsigned long long>(r.warmup_failures),
                static_cast<unsigned long long>(r.warmup_pairs + r.warmup_failures));
            for (const auto& [what, count] : r.errors)
                std::printf("  %llu x %s\n", static_cast<unsigned long long>(count), what.c_str());
        }
    } catch (const std::exception& e) {
        std::cerr << "lock_bench: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
