// SPDX-License-Identifier: BSL-1.0
// redlock bench: the library's lock benchmark (bench/lock_bench.cpp's acquire + release pairs)
// from the installed command, against redis-benchmark's PING on the same node.
#include "cli_args.hpp"
#include "commands.hpp"
#include "local_servers.hpp"
#include "lock_pairs.hpp"
#include <redlock/redis/node_spec.hpp>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace redlock::cli {

namespace {

constexpr const char* bench_footer =
    "Uncontended acquire + release pairs through the public API (each on a resource of its own),\n"
    "from one client with C coroutines, for --seconds per run: pairs/s and the acquire and release\n"
    "latencies (p50, p99). Without --nodes it starts 5 local redis-servers and runs N = 1 and\n"
    "N = 5; with --nodes it runs on those (started empty: the restart quarantine is off). Next to\n"
    "it, the PING p50 of redis-benchmark -c 1 on the first node, when redis-benchmark is\n"
    "installed: an acquire costs at least one round trip.\n";

// redis-benchmark -c 1 PING's p50 in microseconds on `uri`; nullopt without redis-benchmark or
// for a node it cannot reach the same way (unix socket, TLS, a password).
std::optional<double> ping_p50_us(const std::string& uri) {
    // A cluster's first seed: one of its servers, one round trip away as its masters are.
    redis::node_spec spec;
    std::string why;
    if (redis::parse_node_spec(uri, spec, why)) return std::nullopt;
    const auto& a = spec.addresses.front();
    if (a.kind != redis::node_address::transport::tcp || !a.password.empty()) return std::nullopt;
    const std::string command = "timeout 60 redis-benchmark -h " + a.host + " -p " + std::to_string(a.port) +
                                " -c 1 -n 20000 -t ping --csv 2>/dev/null";
    std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen(command.c_str(), "r"), ::pclose);
    if (!pipe) return std::nullopt;
    std::string out;
    char buf[512];
    while (std::fgets(buf, sizeof buf, pipe.get()) != nullptr)
        out += buf;
    // "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms",...
    std::istringstream lines(out);
    std::string line;
    while (std::getline(lines, line)) {
        if (!line.starts_with("\"PING_MBULK\"")) continue;
        std::vector<std::string> fields;
        std::istringstream cells(line);
        std::string cell;
        while (std::getline(cells, cell, ','))
            fields.push_back(cell.size() >= 2 ? cell.substr(1, cell.size() - 2) : cell);
        if (fields.size() < 5) return std::nullopt;
        try {
            return std::stod(fields[4]) * 1000.0;
        } catch (const std::exception&) {
            return std::nullopt;
        }
    }
    return std::nullopt;
}

struct bench_settings {
    std::vector<std::string> nodes;
    int seconds = 2;
    std::vector<int> concurrencies = {1, 50};
    bool json = false;
};

// A --nodes list that names a node, and whose every URI parses; its message, CLI11 prefixes
// with the flag. An empty list would otherwise run on local servers, as without --nodes.
std::string node_list_error(const std::string& list) {
    const auto uris = split_node_list(list);
    if (uris.empty()) return "no node URI given";
    for (const auto& uri : uris) {
        redis::node_spec spec;
        std::string why;
        if (redis::parse_node_spec(uri, spec, why)) return why;
    }
    return {};
}

// "1,50": every piece a whole number in [1, 10000], at least one.
std::string concurrency_error(const std::string& list) {
    const auto pieces = split_list(list);
    if (pieces.empty()) return "no value";
    for (auto piece : pieces) {
        if (auto why = CLI::Range(1, 10'000)(piece); !why.empty()) return why;
    }
    return {};
}

int bench_command(const bench_settings& s) {
    const auto& nodes = s.nodes;
    const double seconds = s.seconds;
    const auto& concurrencies = s.concurrencies;
    const bool json = s.json;

    std::optional<local_servers> servers;
    std::vector<std::vector<std::string>> node_sets;
    if (nodes.empty()) {
        servers.emplace(5);
        const auto all = servers->uris();
        node_sets = {{all.front()}, all};
    } else {
        node_sets = {nodes};
    }
    const auto ping = ping_p50_us(node_sets.front().front());
    nlohmann::json runs = nlohmann::json::array();
    for (const auto& set : node_sets) {
        for (int c : concurrencies) {
            const auto r = lock_pairs::measure(set, c, seconds, 500);
            if (json) {
                runs.push_back(r.to_json());
                continue;
            }
            std::printf(
                "N=%zu C=%-3d %9.0f pairs/s  acquire p50 %7.1f us  p99 %8.1f us  release p50 %7.1f us  "
                "failures %llu\n",
                r.nodes, r.concurrency, r.pairs_per_s, r.acquire_p50_us, r.acquire_p99_us, r.release_p50_us,
                static_cast<unsigned long long>(r.acquire_failures + r.release_failures));
            if (ping && c == 1)
                std::printf("        acquire p50 = %.2f x PING p50\n", r.acquire_p50_us / *ping);
        }
    }
    if (json) {
        nlohmann::json report = {{"runs", runs}};
        report["ping_p50_us"] = ping ? nlohmann::json(*ping) : nlohmann::json(nullptr);
        std::printf("%s\n", report.dump().c_str());
    } else if (ping) {
        std::printf("PING p50 (redis-benchmark -c 1, first node): %.1f us\n", *ping);
    } else {
        std::printf(
            "PING p50: not measured (redis-benchmark not found, or the node needs a password/socket)\n");
    }
    return 0;
}

}  // namespace

subcommand add_bench_command(CLI::App& redlock) {
    auto* bench = add_command(redlock, "bench", "acquire + release pairs/s and latencies against PING",
                              "redlock bench [--nodes URI,...] [--seconds 2] [--concurrency 1,50] [--json]",
                              bench_footer);
    auto s = std::make_shared<bench_settings>();
    bench
        ->add_option_function<std::string>(
            "--nodes", [s](const std::string& list) { s->nodes = split_node_list(list); },
            "the nodes to measure, instead of 5 local redis-servers")
        ->check(node_list_error)
        ->type_name("URI,...");
    bench->add_option("--seconds", s->seconds, "how long each run lasts (default 2)")
        ->check(CLI::Range(1, 3600))
        ->type_name("N");
    bench
        ->add_option_function<std::string>(
            "--concurrency",
            [s](const std::string& list) {
                s->concurrencies.clear();
                for (const auto& piece : split_list(list))
                    s->concurrencies.push_back(std::stoi(piece));
            },
            "a run for each number of coroutines C (default 1,50)")
        ->check(concurrency_error)
        ->type_name("C,C,...");
    add_switch(*bench, "--json", s->json, "one JSON document of every run instead of text");
    return {bench, [s] { return bench_command(*s); }};
}

}  // namespace redlock::cli
