// SPDX-License-Identifier: BSL-1.0
#include "fault/chaos/failover_faults.hpp"

#include <algorithm>
#include <array>

namespace redlock::chaos {

using std::chrono::milliseconds;
using namespace std::chrono_literals;

namespace {
// Fault lookups ask a running, unpaused server: it answers at once or something is wrong.
constexpr auto probe_timeout = 500ms;
}  // namespace

failover_faults::failover_faults(std::uint64_t seed, std::vector<failover_group> groups,
                                 std::vector<pid_t> workers)
    : fault_schedule(seed, std::move(workers)), groups_(std::move(groups)) {}

void failover_faults::inject() {
    // The essential faults at set points (again as soon as possible if their group was busy);
    // the rest at random.
    constexpr std::array<std::uint64_t, 4> essential_at = {5, 12, 20, 40};
    if (inject_essential_when_due(essential_at)) return;
    auto& g = groups_[below(groups_.size())];
    const int roll = uniform(0, 99);
    if (roll < 40) {
        const bool master = uniform(0, 1) == 0;
        const auto fault = static_cast<data_fault>(uniform(0, 2));
        (void)data_server_fault(g, master, fault);
    } else if (roll < 45) {
        (void)manual_failover(g);
    } else if (roll < 55) {
        sentinel_fault(g);
    } else if (roll < 70) {
        worker_pause();
    } else if (roll < 85) {
        server_command(g, {"SCRIPT", "FLUSH"}, "script_flush");
    } else {
        server_command(g, {"CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"}, "client_kill");
    }
}

bool failover_faults::inject_essential(std::size_t which) {
    switch (which) {
        case 0: {
            // A master back empty before anyone noticed: the first group without persistence.
            const auto g =
                std::find_if(groups_.begin(), groups_.end(), [](auto& x) { return !x.persistent; });
            return g == groups_.end() || data_server_fault(*g, true, data_fault::restart_at_once);
        }
        case 1:
            return worker_pause();
        case 2:
            return data_server_fault(groups_[below(groups_.size())], true, data_fault::down_until_failover);
        default:
            return manual_failover(groups_[below(groups_.size())]);
    }
}

bool failover_faults::any_out(const std::vector<test::redis_server*>& of) const {
    return std::any_of(of.begin(), of.end(), [&](test::redis_server* s) { return out_.contains(s); });
}

std::string role_of(const test::redis_server& s) {
    try {
        const auto reply = s.command({"ROLE"}, probe_timeout);
        if (!reply.elements.empty() && reply.elements[0].is_string()) return reply.elements[0].str;
    } catch (const std::exception&) {
        // Not answering now: unknown.
    }
    return "";
}

unsigned short failover_faults::named_master(const failover_group& g) const {
    for (auto* sentinel : g.sentinels) {
        if (out_.contains(sentinel)) continue;
        try {
            const auto reply = sentinel->command(
                {"SENTINEL", "GET-MASTER-ADDR-BY-NAME", g.sentinel_master_name}, probe_timeout);
            if (reply.elements.size() == 2)
                return static_cast<unsigned short>(std::stoi(reply.elements[1].str));
        } catch (const std::exception&) {
            // Ask the next one.
        }
    }
    return 0;
}

std::string failover_faults::server_name(const failover_group& g, const test::redis_server& s) const {
    return g.name + " port " + std::to_string(s.port());
}

void failover_faults::take_out(test::redis_server* s, bool kill, milliseconds back_after,
                               const std::string& kind, const std::string& target,
                               std::function<void()> after_restart) {
    out_.insert(s);
    count(kind, target);
    if (kill) {
        s->kill9();
    } else {
        s->pause();
    }
    later(back_after, [this, s, kill, kind, target, after_restart = std::move(after_restart)] {
        if (kill) {
            s->restart();
            restarted();
            if (after_restart) after_restart();
        } else {
            s->resume();
        }
        out_.erase(s);
        note("heal " + kind, target);
    });
}

bool failover_faults::data_server_fault(failover_group& g, bool master, data_fault fault) {
    if (any_out(g.data)) return false;
    // The server is drawn before the roles are read, so that a seed draws the same faults
    // however the failovers went.
    const auto pick = below(g.data.size());
    std::vector<test::redis_server*> of_role;
    const auto named = named_master(g);
    for (auto* s : g.data) {
        const auto role = role_of(*s);
        // With Sentinel, a server restarted as a master of its own is not the master.
        const bool is_master = role == "master" && (g.sentinels.empty() || named == s->port());
        if (master ? is_master : role == "slave") of_role.push_back(s);
    }
    if (of_role.empty()) return false;  // in the middle of a failover
    auto* s = of_role[pick % of_role.size()];
    const std::string who = master ? "master" : "replica";
    // A replica watched by Sentinel comes back as a replica: the sentinels rewrote its config
    // file when they made it one. The fixture's servers have no config file: say it again. (A
    // cluster node's role is in its nodes.conf; a master comes back as one in both, and the
    // sentinels convert it once they have failed it over.)
    std::function<void()> rejoin;
    if (!master && !g.sentinels.empty()) {
        rejoin = [this, &g, s] {
            const auto port = named_master(g);
            if (port == 0 || port == s->port()) return;
            try {
                (void)s->command({"REPLICAOF", "127.0.0.1", std::to_string(port)}, probe_timeout);
            } catch (const std::exception&) {
                // The sentinels will convert it, 8 to 20 s later.
            }
        };
    }
    const auto detection = static_cast<int>(g.failure_detection.count());
    switch (fault) {
        case data_fault::pause:
            take_out(s, false, milliseconds(uniform(200, detection / 2)), who + "_pause", server_name(g, *s));
            break;
        case data_fault::restart_at_once:
            // Back before anyone noticed: a master without persistence is an empty master now.
            take_out(s, true, milliseconds(uniform(0, 500)),
                     who + (g.persistent ? "_restart_aof" : "_restart_empty"), server_name(g, *s), rejoin);
            break;
        case data_fault::down_until_failover:
            // Down for long enough that a replica takes over (a replica's absence just costs
            // the WAITs of the fenced kinds). A master comes back as a replica.
            take_out(s, true, milliseconds(detection + uniform(2000, 4000)), who + "_down_failover",
                     server_name(g, *s), rejoin);
            break;
    }
    return true;
}

void failover_faults::sentinel_fault(failover_group& g) {
    if (g.sentinels.empty()) {
        (void)data_server_fault(g, uniform(0, 1) == 0, static_cast<data_fault>(uniform(0, 2)));
        return;
    }
    if (any_out(g.sentinels)) return;
    auto* s = g.sentinels[below(g.sentinels.size())];
    const bool kill = uniform(0, 1) == 0;
    take_out(s, kill, milliseconds(uniform(300, 3000)), kill ? "sentinel_restart" : "sentinel_pause",
             g.name + " sentinel port " + std::to_string(s->port()));
}

bool failover_faults::manual_failover(failover_group& g) {
    // Only from a settled group: a failover asked while a server is out may not find a replica.
    if (any_out(g.data) || any_out(g.sentinels)) return false;
    try {
        const auto what = g.manual_failover(rng_);
        count("manual_failover", g.name + ": " + what);
        restarted();
        return true;
    } catch (const std::exception& e) {
        note("manual_failover refused", g.name + ": " + e.what());
        return false;
    }
}

void failover_faults::server_command(failover_group& g, const std::vector<std::string>& command,
                                     const std::string& kind) {
    std::vector<test::redis_server*> candidates;
    for (auto* s : g.data)
        if (!out_.contains(s)) candidates.push_back(s);
    if (candidates.empty()) return;
    auto* s = candidates[below(candidates.size())];
    try {
        (void)s->command(command, probe_timeout);
        count(kind, server_name(g, *s));
    } catch (const std::exception&) {
        // A server that could not answer now: the fault simply did not happen.
    }
}

}  // namespace redlock::chaos
