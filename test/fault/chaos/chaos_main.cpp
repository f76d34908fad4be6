// SPDX-License-Identifier: BSL-1.0
// The long-run chaos mode: randomized schedules (see chaos_run.hpp) one after another until the
// time is up, then a JSON report: schedules run, faults injected by kind, operations, and every
// violation with its seed and evidence. Exit status 0 with no violation, 1 with any, 2 on usage;
// a negative control (--broken, --no-min-replicas, --no-restart-quarantine) the other way round:
// 0 when the checker found
// second holders, 1 when it found none.
//
//   chaos --minutes M [--seed S] [--schedule-seconds T] [--report FILE] [--broken]
//         [--topology masters|cluster|sentinel] [--no-min-replicas] [--no-restart-quarantine]
//         --worker PATH
//
// --no-min-replicas (Sentinel only): masters write without a replica, the split brain's
// negative control. --no-restart-quarantine (masters only): the workers' restart quarantine is
// off, its negative control (servers restart empty there).
#include "fault/chaos/chaos_run.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>

namespace {

namespace chaos = redlock::chaos;

struct args {
    double minutes = 1;
    std::uint64_t seed = 0;
    bool seed_given = false;
    int schedule_seconds = 20;
    std::string report = "chaos-report.json";
    bool broken = false;
    bool no_min_replicas = false;        // Sentinel: the split brain's negative control
    bool no_restart_quarantine = false;  // masters: the restart quarantine's negative control
    chaos::topology topology = chaos::topology::masters;
    std::string worker;
};

bool parse(int argc, char** argv, args& a) {
    for (int i = 1; i < argc; ++i) {
        const std::string flag = argv[i];
        if (flag == "--broken") {
            a.broken = true;
            continue;
        }
        if (flag == "--no-min-replicas") {
            a.no_min_replicas = true;
            continue;
        }
        if (flag == "--no-restart-quarantine") {
            a.no_restart_quarantine = true;
            continue;
        }
        if (i + 1 >= argc) return false;
        const std::string value = argv[++i];
        if (flag == "--minutes") {
            a.minutes = std::stod(value);
        } else if (flag == "--seed") {
            a.seed = std::stoull(value);
            a.seed_given = true;
        } else if (flag == "--schedule-seconds") {
            a.schedule_seconds = std::stoi(value);
        } else if (flag == "--report") {
            a.report = value;
        } else if (flag == "--worker") {
            a.worker = value;
        } else if (flag == "--topology") {
            const auto t = chaos::parse_topology(value);
            if (!t) return false;
            a.topology = *t;
        } else {
            return false;
        }
    }
    return !a.worker.empty() && a.minutes > 0 && a.schedule_seconds > 0 &&
           (!a.no_min_replicas || a.topology == chaos::topology::sentinel) &&
           (!a.no_restart_quarantine || a.topology == chaos::topology::masters);
}

}  // namespace

int main(int argc, char** argv) {
    using nlohmann::json;
    args a;
    try {
        if (!parse(argc, argv, a)) {
            std::fprintf(stderr,
                         "usage: chaos --minutes M [--seed S] [--schedule-seconds T] [--report FILE] "
                         "[--broken] [--topology masters|cluster|sentinel] [--no-min-replicas] "
                         "[--no-restart-quarantine] "
                         "--worker PATH\n");
            return 2;
        }
    } catch (const std::exception&) {
        std::fprintf(stderr, "chaos: a flag's value is not a number\n");
        return 2;
    }
    if (!a.seed_given) a.seed = std::random_device{}();
    std::printf("chaos: topology %s, seed %llu, %.1f minutes, schedules of %d s%s\n",
                std::string(chaos::to_string(a.topology)).c_str(), static_cast<unsigned long long>(a.seed),
                a.minutes, a.schedule_seconds,
                a.broken                  ? ", BROKEN variant (negative control)"
                : a.no_min_replicas       ? ", masters that write without a replica (negative control)"
                : a.no_restart_quarantine ? ", no restart quarantine (negative control)"
                                          : "");
    std::fflush(stdout);

    const auto started = std::chrono::steady_clock::now();
    const auto until = started + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                     std::chrono::duration<double, std::ratio<60>>(a.minutes));
    json faults = json::object();
    json operations = {{"holds", 0},   {"holds_lost", 0},     {"holds_judged", 0}, {"acquire_failures", 0},
                       {"writes", 0},  {"writes_refused", 0}, {"reentries", 0},    {"watchdog_renewals", 0},
                       {"extends", 0}, {"handovers", 0},      {"adoptions", 0}};
    json schedules = json::array();
    json violations = json::array();
    std::uint64_t next_seed = a.seed;
    int exit_status = 0;
    while (std::chrono::steady_clock::now() < until) {
        chaos::schedule_options o;
        o.seed = next_seed++;
        o.seconds = a.schedule_seconds;
        o.broken = a.broken;
        o.min_replicas_to_write = !a.no_min_replicas;
        o.restart_quarantine = !a.no_restart_quarantine;
        o.topology = a.topology;
        o.worker_path = a.worker;
        chaos::schedule_result r;
        try {
            r = chaos::run_schedule(o);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "chaos: schedule %llu could not run: %s\n",
                         static_cast<unsigned long long>(o.seed), e.what());
            exit_status = 1;
            break;
        }
        chaos::print_violations(r, stdout);
        for (const auto& [kind, n] : r.faults)
            faults[kind] = faults.value(kind, std::uint64_t{0}) + n;
        operations["holds"] = operations["holds"].get<std::uint64_t>() + r.holds;
        operations["holds_lost"] = operations["holds_lost"].get<std::uint64_t>() + r.holds_lost;
        operations["holds_judged"] = operations["holds_judged"].get<std::uint64_t>() + r.holds_judged;
        operations["acquire_failures"] =
            operations["acquire_failures"].get<std::uint64_t>() + r.acquire_failures;
        operations["writes"] = operations["writes"].get<std::uint64_t>() + r.writes;
        operations["writes_refused"] = operations["writes_refused"].get<std::uint64_t>() + r.writes_refused;
        operations["reentries"] = operations["reentries"].get<std::uint64_t>() + r.reentries;
        operations["watchdog_renewals"] =
            operations["watchdog_renewals"].get<std::uint64_t>() + r.watchdog_renewals;
        operations["extends"] = operations["extends"].get<std::uint64_t>() + r.extends;
        operations["handovers"] = operations["handovers"].get<std::uint64_t>() + r.handovers;
        operations["adoptions"] = operations["adoptions"].get<std::uint64_t>() + r.adoptions;
        std::uint64_t injected = 0;
        for (const auto& [kind, n] : r.faults)
            injected += n;
        schedules.push_back({{"seed", r.seed},
                             {"seconds", r.seconds},
                             {"faults", injected},
                             {"holds", r.holds},
                             {"violations", r.violations.size()}});
        for (const auto& v : r.violations)
            violations.push_back(
                {{"seed", r.seed}, {"rule", v.rule}, {"detail", v.detail}, {"evidence", v.evidence}});
        std::printf(
            "schedule seed %llu: %.1f s, %llu faults, %llu holds (%llu lost), %llu failed acquires, "
            "%llu writes (%llu stale refused), %zu violations\n",
            static_cast<unsigned long long>(r.seed), r.seconds, static_cast<unsigned long long>(injected),
            static_cast<unsigned long long>(r.holds), static_cast<unsigned long long>(r.holds_lost),
            static_cast<unsigned long long>(r.acquire_failures), static_cast<unsigned long long>(r.writes),
            static_cast<unsigned long long>(r.writes_refused), r.violations.size());
        std::fflush(stdout);
    }
    const bool control = a.broken || a.no_min_replicas || a.no_restart_quarantine;
    if (control) {
        // A negative control passes when the checker names what it broke: second holders.
        std::size_t second_holders = 0;
        for (const auto& v : violations) {
            const auto rule = v["rule"].get<std::string>();
            second_holders += rule == "mutual_exclusion" || rule == "permits_exceeded" ? 1 : 0;
        }
        std::printf("chaos: negative control: %zu second holders\n", second_holders);
        if (second_holders == 0) exit_status = 1;
    } else if (!violations.empty()) {
        exit_status = 1;
    }
    // The safety claims rest on these having happened: the topology's essential faults (nodes
    // restarted empty, failovers, paused clients), stale writes the store refused (fencing) and
    // leases handed over between workers.
    // A run without them passes nothing. At least one of each kind of fault per five schedules.
    std::vector<std::string> missing;
    const std::uint64_t needed = (schedules.size() + 4) / 5;
    for (const auto& kind : chaos::essential_faults(a.topology)) {
        if (faults.value(kind, std::uint64_t{0}) < needed)
            missing.push_back(std::string(kind) +
                              " faults: " + std::to_string(faults.value(kind, std::uint64_t{0})) +
                              " (at least " + std::to_string(needed) + ")");
    }
    if (!control && operations["writes_refused"].get<std::uint64_t>() == 0)
        missing.push_back("stale writes refused by the store: 0");
    if (const auto adopted = operations["adoptions"].get<std::uint64_t>(); !control && adopted < needed)
        missing.push_back("leases handed over and adopted: " + std::to_string(adopted) + " (at least " +
                          std::to_string(needed) + ")");
    for (const auto& m : missing)
        std::printf("chaos: the run did not exercise what its verdict rests on: %s\n", m.c_str());
    if (!missing.empty()) exit_status = 1;
    const json report = {
        {"topology", chaos::to_string(a.topology)},
        {"seed", a.seed},
        {"broken", a.broken},
        {"min_replicas_to_write", !a.no_min_replicas},
        {"restart_quarantine", !a.no_restart_quarantine},
        {"minutes",
         std::chrono::duration<double, std::ratio<60>>(std::chrono::steady_clock::now() - started).count()},
        {"schedules", schedules.size()},
        {"faults", faults},
        {"operations", operations},
        {"violations", violations.size()},
        {"not_exercised", missing},
        {"violation_details", violations},
        {"per_schedule", schedules}};
    std::ofstream(a.report) << report.dump(2) << "\n";
    std::printf("chaos: %zu schedules, %zu violations; report in %s\n", schedules.size(), violations.size(),
                a.report.c_str());
    return exit_status;
}
