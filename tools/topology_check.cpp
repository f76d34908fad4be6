// SPDX-License-Identifier: BSL-1.0
#include "topology_check.hpp"

#include <algorithm>
#include <map>

namespace redlock::cli {

namespace {

using lv = finding::level;

std::string voter_label(std::size_t i, const std::string& name) {
    return "nodes[" + std::to_string(i) + "] " + name;
}

std::string joined(const std::vector<std::string>& parts, const char* separator = "; ") {
    std::string out;
    for (const auto& p : parts)
        out += (out.empty() ? "" : separator) + p;
    return out;
}

// A replica promoted within a lease may lack the lease's grant (replication is asynchronous):
// the failover quarantine keeps the new master from voting until every lease has run out; with
// it off, its grants count at once. `setting` is how long a master goes unnoticed before the
// promotion starts ("cluster-node-timeout 5000 ms").
void failover_within_a_lease(const client_config& cfg, const std::string& label, const std::string& setting,
                             std::int64_t timeout_ms, std::vector<finding>& out) {
    if (timeout_ms >= cfg.max_ttl.count()) return;
    const auto what =
        label + ": " + setting + " is shorter than max_ttl " + std::to_string(cfg.max_ttl.count()) +
        " ms: a replica can be promoted while a lease is held, and it may lack the lease's grant "
        "(replication is asynchronous)";
    if (cfg.failover_quarantine) {
        out.push_back({lv::info, what + "; the failover quarantine keeps the promoted master from voting for "
                                        "max_ttl"});
    } else {
        out.push_back({lv::unsafe, what +
                                       "; with the failover quarantine off its grants count at once: a lock "
                                       "two clients hold; turn failover_quarantine on (or acquire with "
                                       "lock_options::replicas)"});
    }
}

}  // namespace

std::string master_label(std::size_t voter, const std::string& host, std::uint16_t port) {
    return "nodes[" + std::to_string(voter) + "] master " + endpoint(host, port);
}

void check_cluster(const client_config& cfg, std::size_t voter, const cluster_report& c,
                   std::vector<finding>& out) {
    const auto label = voter_label(voter, c.name);
    if (c.seed.empty()) {
        if (!c.slots_error.empty()) {
            out.push_back({lv::unsafe, label + ": CLUSTER SLOTS failed (" + c.slots_error +
                                           "): the client reads the slot map the same way; without one, no "
                                           "lock can be taken through this voter"});
        } else {
            out.push_back({lv::unchecked, label + " did not answer (" + joined(c.seed_errors) +
                                              "): it was not checked; while it is down, the lock tolerates "
                                              "one failure fewer"});
        }
        return;
    }
    for (const auto& e : c.seed_errors)
        out.push_back({lv::info, label + ": seed " + e + "; the slot map came from " + c.seed});
    if (c.unserved_slots > 0) {
        out.push_back({lv::warning, label + ": " + std::to_string(c.unserved_slots) +
                                        " of 16384 slots have no master: locks on resources in them fail"});
    }
    if (!c.info_error.empty()) {
        out.push_back({lv::warning, label + ": CLUSTER INFO failed (" + c.info_error +
                                        "): the cluster's state was not checked"});
    } else if (!c.state.empty() && c.state != "ok") {
        out.push_back({lv::warning, label + ": cluster_state:" + c.state + " (CLUSTER INFO of " + c.seed +
                                        "): the cluster refuses commands (CLUSTERDOWN) until it is ok; locks "
                                        "through it fail"});
    }
    if (!c.nodes_error.empty()) {
        out.push_back({lv::info, label + ": CLUSTER NODES failed (" + c.nodes_error +
                                     "): replicas were counted from " +
                                     (c.map_from_shards ? "CLUSTER SHARDS" : "CLUSTER SLOTS") +
                                     ", which leaves out one that has not synced yet"});
    }
    bool any_replica = false;
    for (const auto& m : c.masters) {
        any_replica = any_replica || m.replicas + m.failed_replicas > 0;
        if (m.replicas == 0) {
            out.push_back({lv::warning,
                           master_label(voter, m.host, m.port) + " has no replica" +
                               (m.failed_replicas > 0
                                    ? " that is up (" + std::to_string(m.failed_replicas) + " flagged fail)"
                                    : std::string()) +
                               ": a failover is impossible; its slots go down with it"});
        }
    }
    if (any_replica) {
        if (!c.node_timeout_error.empty()) {
            out.push_back({lv::warning, label + ": CONFIG GET cluster-node-timeout failed (" +
                                            c.node_timeout_error +
                                            "): whether a failover can come within a lease was not checked"});
        } else if (c.node_timeout_ms) {
            failover_within_a_lease(cfg, label,
                                    "cluster-node-timeout " + std::to_string(*c.node_timeout_ms) + " ms",
                                    *c.node_timeout_ms, out);
        }
    }
    for (const auto& m : c.masters)
        check_server(cfg, master_label(voter, m.host, m.port), m.server, server_role::cluster_master, out);
}

void check_sentinel(const client_config& cfg, std::size_t voter, const sentinel_report& s,
                    std::vector<finding>& out) {
    const auto label = voter_label(voter, s.name);
    const auto named = "'" + s.master_name + "'";
    std::vector<const sentinel_answer*> answered, knowing;
    std::vector<std::string> silent;
    for (const auto& a : s.sentinels) {
        if (!a.reachable) {
            silent.push_back(a.endpoint + ": " + a.error);
            continue;
        }
        answered.push_back(&a);
        if (!a.master_host.empty()) knowing.push_back(&a);
    }

    // How many sentinels watch the master: each counts the others it heard of.
    std::optional<std::int64_t> group, quorum;
    for (const auto* a : knowing) {
        if (a->num_other_sentinels) group = std::max(group.value_or(0), *a->num_other_sentinels + 1);
        if (a->quorum && !quorum) quorum = a->quorum;
    }
    if (group && *group < 3) {
        out.push_back({lv::warning, label + ": " + std::to_string(*group) + " sentinel(s) watch " + named +
                                        " (SENTINEL MASTER's num-other-sentinels + 1): a failover needs the "
                                        "votes of a majority of them, so one down blocks it; run 3 or more, "
                                        "and list them in the URI"});
    } else if (s.sentinels.size() < 3) {
        out.push_back({lv::warning, label + " lists " + std::to_string(s.sentinels.size()) +
                                        " sentinel(s): the client finds the master only through those it "
                                        "lists; list 3 or more, so that one down leaves others to ask"});
    }
    if (group && quorum && *quorum < *group / 2 + 1) {
        out.push_back({lv::info, label + ": quorum " + std::to_string(*quorum) + " of " +
                                     std::to_string(*group) +
                                     " sentinels: fewer than a majority can declare the master down, so one "
                                     "sentinel cut off from it can start a failover of a master that works"});
    }

    if (answered.empty()) {
        out.push_back({lv::unchecked, label + " did not answer (" + joined(silent) +
                                          "): it was not checked; while it is down, the lock tolerates one "
                                          "failure fewer"});
        return;
    }
    for (const auto& why : silent) {
        out.push_back({lv::warning, label + ": sentinel " + why +
                                        ": the client asks the others; with fewer answering, it may not "
                                        "find the master"});
    }
    if (knowing.empty()) {
        std::vector<std::string> words;
        for (const auto* a : answered)
            words.push_back(a->endpoint + ": " + a->master_addr_error);
        out.push_back({lv::unsafe, label + ": no sentinel knows a master named " + named + " (" +
                                       joined(words) + "): no lock can be taken through this voter"});
        return;
    }
    for (const auto* a : answered) {
        if (a->master_host.empty()) {
            out.push_back({lv::warning, label + ": sentinel " + a->endpoint + " names no master for " +
                                            named + " (" + a->master_addr_error +
                                            "): it watches other masters, or lost this one; the client "
                                            "passes it over"});
        }
    }

    // The master each names: more than one is a failover under way, or sentinels split apart.
    std::map<std::string, std::vector<std::string>> by_master;
    for (const auto* a : knowing)
        by_master[endpoint(a->master_host, a->master_port)].push_back(a->endpoint);
    if (by_master.size() > 1) {
        std::vector<std::string> who;
        for (const auto& [master, sentinels] : by_master)
            who.push_back(joined(sentinels, ", ") + " name " + master);
        out.push_back({lv::unsafe, label + ": the sentinels name different masters for " + named + " (" +
                                       joined(who) +
                                       "): a failover is under way, or they are split: two masters can "
                                       "each grant the same lock; check again, and if it stays, repair the "
                                       "sentinels"});
    }

    std::map<std::string, std::vector<std::string>> ckquorum_failures;
    for (const auto* a : knowing) {
        if (!a->master_error.empty()) {
            out.push_back({lv::warning, label + ": SENTINEL MASTER failed at " + a->endpoint + " (" +
                                            a->master_error + "): its view of the master was not checked"});
        } else if (!a->flags.empty() && a->flags != "master") {
            out.push_back({lv::warning, label + ": sentinel " + a->endpoint + " flags " + named + " " +
                                            a->flags + ": it sees the master down, or a failover under way"});
        }
        if (a->ckquorum_ok == false) ckquorum_failures[a->ckquorum].push_back(a->endpoint);
    }
    for (const auto& [words, sentinels] : ckquorum_failures) {
        out.push_back({lv::warning, label + ": SENTINEL CKQUORUM at " + joined(sentinels, ", ") + ": " +
                                        words +
                                        ": a failover is impossible; the master going down takes the voter "
                                        "with it"});
    }

    std::optional<std::int64_t> replicas, down_after;
    for (const auto* a : knowing) {
        if (a->num_slaves) replicas = std::max(replicas.value_or(0), *a->num_slaves);
        if (a->down_after_ms)
            down_after = std::min(down_after.value_or(*a->down_after_ms), *a->down_after_ms);
    }
    const auto master = master_label(voter, s.master_host, s.master_port);
    if (replicas == 0) {
        out.push_back({lv::warning, master +
                                        " has no replica (SENTINEL MASTER's num-slaves 0): a failover is "
                                        "impossible; the voter goes down with it"});
    }
    if (replicas.value_or(0) > 0 && down_after) {
        failover_within_a_lease(cfg, label, "down-after-milliseconds " + std::to_string(*down_after),
                                *down_after, out);
    }
    if (!s.master_host.empty()) check_server(cfg, master, s.master, server_role::sentinel_master, out);
}

}  // namespace redlock::cli
