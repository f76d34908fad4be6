// SPDX-License-Identifier: BSL-1.0
#include "deployment_check.hpp"

#include "lock/acquire/quorum.hpp"
#include "lock/nodes/uptime_quarantine.hpp"
#include "topology_check.hpp"
#include <redlock/redis/server_version.hpp>

#include <boost/asio/ip/address.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>

namespace redlock::cli {

namespace {

std::string node_label(std::size_t i, const node_report& n) {
    return "nodes[" + std::to_string(i) + "] " + n.name;
}

// Why the server's end of the connection is not what was dialed; empty if it is (or unknown).
// A name dialed is compared by its port only.
std::string forwarded(const node_report& n) {
    if (n.server_laddr.empty() || n.dialed_host.empty()) return {};
    const auto colon = n.server_laddr.rfind(':');
    if (colon == std::string::npos) return {};
    boost::system::error_code dialed_ec, seen_ec;
    const auto dialed_ip = boost::asio::ip::make_address(n.dialed_host, dialed_ec);
    const auto seen_ip = boost::asio::ip::make_address(n.server_laddr.substr(0, colon), seen_ec);
    const bool same_port = n.server_laddr.substr(colon + 1) == std::to_string(n.dialed_port);
    const bool same_ip = dialed_ec || seen_ec || dialed_ip == seen_ip;
    if (same_port && same_ip) return {};
    return "the server sees our connection arrive at " + n.server_laddr + ", not at " + n.dialed_host + ":" +
           std::to_string(n.dialed_port);
}

// Every server probed: a voter of its own, the masters of a cluster, a Sentinel voter's master.
struct probed_server {
    std::size_t voter;
    std::string label;
    const node_report* report;
};

// The restart quarantine's uptime rule, as the client keeps it (uptime_quarantine, with the
// largest max_ttl any client recorded): a young server does not vote until then. Said of each
// such server, and how long until a quorum of voters votes: acquires wait until then, or fail
// with a shorter wait. Not a fault: it ends by itself.
void restart_quarantines(const client_config& cfg, std::size_t voters,
                         const std::vector<probed_server>& servers, std::optional<std::int64_t> recorded,
                         std::vector<finding>& out) {
    using namespace std::chrono;
    const milliseconds max_ttl(std::max<std::int64_t>(cfg.max_ttl.count(), recorded.value_or(0)));
    const auto wait_ms =
        duration_cast<milliseconds>(detail::uptime_quarantine(max_ttl, cfg.drift_factor)).count();
    const auto in_seconds = [](std::int64_t ms) { return std::to_string((ms + 999) / 1000); };
    std::vector<std::int64_t> voter_left(voters, 0);  // a cluster: its last master's
    for (const auto& p : servers) {
        if (!p.report->uptime_s) continue;
        const auto left_ms = wait_ms - *p.report->uptime_s * 1000;
        if (left_ms <= 0) continue;
        out.push_back({finding::level::info,
                       p.label + ": up " + std::to_string(*p.report->uptime_s) +
                           " s: in the restart quarantine for about " + in_seconds(left_ms) +
                           " s more (it does not vote until it has been up " + in_seconds(wait_ms) + " s)"});
        voter_left[p.voter] = std::max(voter_left[p.voter], left_ms);
    }
    if (voters == 0) return;
    std::sort(voter_left.begin(), voter_left.end());
    const auto quorum_in = voter_left[detail::quorum_of(voters) - 1];
    if (quorum_in > 0) {
        out.push_back(
            {finding::level::info, "no quorum of nodes votes for about " + in_seconds(quorum_in) +
                                       " s: until then every acquire waits (or fails, with a shorter "
                                       "wait)"});
    }
}

}  // namespace

void check_server(const client_config& cfg, const std::string& label, const node_report& n, server_role role,
                  std::vector<finding>& out) {
    using lv = finding::level;
    if (!n.reachable) {
        const char* consequence =
            role == server_role::cluster_master
                ? "locks on resources in its slots fail while it is down, until a replica takes over"
            : role == server_role::sentinel_master
                ? "while it is down, until the sentinels fail over, the lock tolerates one failure fewer"
                : "while it is down, the lock tolerates one failure fewer";
        out.push_back(
            {lv::unchecked, label + " did not answer (" + n.error + "): it was not checked; " + consequence});
        return;
    }
    if (redis::older_than(n.version, redis::lock_min_server_version).value_or(false)) {
        out.push_back({lv::unsafe, label + " runs Redis " + n.version + ": the lock needs " +
                                       std::string(redis::lock_min_server_version) +
                                       " or later (SET ... NX GET); every connection to it fails its "
                                       "handshake, so it never votes"});
    }
    if (n.role == "slave" && role == server_role::voter) {
        out.push_back({lv::unsafe, label +
                                       " is a replica: Redlock needs independent masters; a replica refuses "
                                       "writes (READONLY) or takes writes its master never sees"});
    } else if (n.role == "slave" && role == server_role::cluster_master) {
        out.push_back({lv::warning, label + " reports role:slave, though the slot map names it a master: a "
                                            "failover is under way, or the map is stale; check again once it "
                                            "is over"});
    } else if (n.role == "slave") {
        out.push_back({lv::warning, label +
                                        " reports role:slave, though the sentinels name it the master: the "
                                        "client refuses it (ROLE), and the voter does not vote until they "
                                        "name one that is a master; a failover is under way, or the "
                                        "sentinels lost track of it"});
    }
    if (!n.script_error.empty()) {
        out.push_back({lv::unsafe, label + " cannot run scripts (" + n.script_error +
                                       "): release and extend are owner-checked Lua scripts"});
    }
    for (const auto& r : n.refused)
        out.push_back({lv::unsafe, label + ": the ACL refuses a command the lock needs: " + r});
    if (!n.config_error.empty()) {
        out.push_back({lv::warning, label + ": CONFIG GET refused (" + n.config_error +
                                        "): eviction and persistence could not be checked"});
    }
    if (!n.maxmemory_policy.empty() && n.maxmemory_policy != "noeviction") {
        const bool limited = n.maxmemory.value_or(0) > 0;
        const std::string why = n.maxmemory_policy.starts_with("volatile")
                                    ? "evicts keys that have a ttl, and every lock key has one"
                                    : "evicts any key, lock keys included";
        out.push_back({limited ? lv::unsafe : lv::warning,
                       label + ": maxmemory-policy " + n.maxmemory_policy + " " + why +
                           (limited ? ": an evicted lock is a lock two clients hold"
                                    : " once maxmemory is set (it is 0 now)") +
                           "; use noeviction"});
    }
    if (const auto why = forwarded(n); !why.empty()) {
        out.push_back(
            {lv::warning, label + ": " + why +
                              ": a proxy, NAT or port mapping sits between; a restart of the server "
                              "shows only as a new run_id on a new connection, and one that keeps "
                              "our connection open across a restart hides it from the restart "
                              "quarantine; let it close client connections with the server's, or "
                              "connect directly"});
    }
    if (n.clock_span_server_us && n.clock_span_local_us && *n.clock_span_local_us > 0) {
        const auto local = *n.clock_span_local_us;
        const auto off = std::llabs(*n.clock_span_server_us - local) - n.clock_span_uncertainty_us;
        if (static_cast<double>(off) > static_cast<double>(local) * cfg.drift_factor) {
            const auto percent =
                100.0 * static_cast<double>(*n.clock_span_server_us - local) / static_cast<double>(local);
            char rate[32];
            std::snprintf(rate, sizeof rate, "%+.1f%%", percent);
            out.push_back({lv::warning, label + ": its clock (TIME) went " + rate + " against ours over " +
                                            std::to_string(local / 1000) +
                                            " ms, more than drift_factor allows: a node clock stepped or "
                                            "slewed that fast shortens or stretches every lock's ttl there; "
                                            "run NTP with slewing, or raise drift_factor"});
        }
    }
    if (!cfg.restart_quarantine && n.aof.has_value()) {
        if (!*n.aof) {
            out.push_back(
                {lv::unsafe, label + ": no AOF and restart quarantine off: a restart forgets the locks "
                                     "it granted, and the node grants them again at once; turn "
                                     "restart_quarantine on, or appendonly yes with appendfsync always"});
        } else if (!n.appendfsync.empty() && n.appendfsync != "always") {
            out.push_back({lv::warning, label + ": appendfsync " + n.appendfsync +
                                            " with restart quarantine off: a crash can lose the last "
                                            "second of grants; use appendfsync always or the quarantine"});
        }
    }
}

std::vector<finding> check_deployment(const client_config& cfg, const std::vector<node_report>& nodes) {
    return check_deployment(cfg, std::vector<voter_report>(nodes.begin(), nodes.end()));
}

std::vector<finding> check_deployment(const client_config& cfg, const std::vector<voter_report>& voters) {
    using lv = finding::level;
    std::vector<finding> out;
    const auto n = voters.size();
    if (n == 1) {
        out.push_back({lv::info, "N = 1: a single instance; if it fails, or loses its data, locks are lost"});
    } else if (n == 2) {
        out.push_back({lv::warning,
                       "N = 2: the quorum is both nodes; either one down stops every lock, and "
                       "it tolerates no failure at all; use 3 or 5"});
    } else if (n % 2 == 0) {
        out.push_back({lv::warning, "N = " + std::to_string(n) +
                                        " is even: it tolerates no more failures than " +
                                        std::to_string(n - 1) + " nodes would; use an odd N"});
    }

    std::vector<probed_server> servers;
    for (std::size_t i = 0; i < n; ++i) {
        if (const auto* server = std::get_if<node_report>(&voters[i])) {
            check_server(cfg, node_label(i, *server), *server, server_role::voter, out);
            servers.push_back({i, node_label(i, *server), server});
        } else if (const auto* cluster = std::get_if<cluster_report>(&voters[i])) {
            check_cluster(cfg, i, *cluster, out);
            for (const auto& m : cluster->masters)
                servers.push_back({i, master_label(i, m.host, m.port), &m.server});
        } else if (const auto* sentinel = std::get_if<sentinel_report>(&voters[i])) {
            check_sentinel(cfg, i, *sentinel, out);
            if (!sentinel->master_host.empty())
                servers.push_back(
                    {i, master_label(i, sentinel->master_host, sentinel->master_port), &sentinel->master});
        }
    }

    // One server behind two voters votes twice; the masters of one cluster are one voter.
    std::map<std::string, const probed_server*> first_with;
    for (const auto& p : servers) {
        if (p.report->run_id.empty()) continue;
        auto [it, fresh] = first_with.try_emplace(p.report->run_id, &p);
        if (!fresh && it->second->voter != p.voter) {
            out.push_back({lv::unsafe, p.label + " is the same server as " + it->second->label + " (run_id " +
                                           p.report->run_id + "): it would vote twice"});
        }
    }

    // Every client records its max_ttl on the nodes, and a restarted node's quarantine waits for
    // the largest recorded: a client with a smaller max_ttl waits as long as the largest.
    std::optional<std::int64_t> recorded;
    for (const auto& p : servers) {
        if (p.report->recorded_max_ttl_ms)
            recorded = std::max(recorded.value_or(0), *p.report->recorded_max_ttl_ms);
    }
    if (cfg.restart_quarantine && recorded && *recorded > cfg.max_ttl.count()) {
        out.push_back({lv::info, "a client of these nodes uses max_ttl " + std::to_string(*recorded) +
                                     " ms, more than this config's " + std::to_string(cfg.max_ttl.count()) +
                                     " ms: a restarted node stays in quarantine for the larger"});
    }
    if (cfg.restart_quarantine) restart_quarantines(cfg, n, servers, recorded, out);

    // Clocks: the spread of (server time - our clock), less what the round trips leave unknown.
    std::int64_t lo = 0, hi = 0, slack = 0;
    bool any = false;
    for (const auto& p : servers) {
        const auto& node = *p.report;
        if (!node.clock_offset_us) continue;
        lo = any ? std::min(lo, *node.clock_offset_us) : *node.clock_offset_us;
        hi = any ? std::max(hi, *node.clock_offset_us) : *node.clock_offset_us;
        slack = std::max(slack, node.clock_uncertainty_us);
        any = true;
    }
    const auto allowance_us = static_cast<std::int64_t>(std::llround(
                                  static_cast<double>(cfg.max_ttl.count()) * cfg.drift_factor * 1000.0)) +
                              2000;
    if (any && hi - lo - 2 * slack > allowance_us) {
        out.push_back({lv::warning, "the nodes' clocks (TIME) are " + std::to_string((hi - lo) / 1000) +
                                        " ms apart, more than the drift allowance of " +
                                        std::to_string(allowance_us / 1000) +
                                        " ms (max_ttl x drift_factor + 2 ms): keys expire at different "
                                        "times on different nodes; run NTP, or raise drift_factor"});
    }
    return out;
}

std::string endpoint(const std::string& host, std::uint16_t port) {
    const bool ipv6 = host.find(':') != std::string::npos;
    return (ipv6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

int exit_status_of(const std::vector<finding>& findings) {
    int status = check_safe;
    for (const auto& f : findings) {
        if (f.severity == finding::level::unsafe) status = check_unsafe;
        if (f.severity == finding::level::unchecked) status = std::max(status, check_unchecked);
        if (f.severity == finding::level::warning) status = std::max(status, check_warnings);
    }
    return status;
}

std::string info_field(std::string_view info, std::string_view field) {
    std::size_t at = 0;
    while (at < info.size()) {
        auto end = info.find('\n', at);
        if (end == std::string_view::npos) end = info.size();
        auto line = info.substr(at, end - at);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.size() > field.size() && line.starts_with(field) && line[field.size()] == ':') {
            return std::string(line.substr(field.size() + 1));
        }
        at = end + 1;
    }
    return {};
}

}  // namespace redlock::cli
