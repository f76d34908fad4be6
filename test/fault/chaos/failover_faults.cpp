// SPDX-License-Identifier: BSL-1.0
#include "fault/chaos/failover_faults.hpp"

#include "fault/chaos/lock_kinds.hpp"

#include <algorithm>

namespace redlock::chaos {

using std::chrono::milliseconds;
using namespace std::chrono_literals;

namespace {
// Fault lookups ask a running, unpaused server: it answers at once or something is wrong.
constexpr auto probe_timeout = 500ms;
}  // namespace

failover_faults::failover_faults(std::uint64_t seed, std::vector<failover_group> groups,
                                 std::vector<pid_t> workers, bool lose_grants, bool fresh_clients)
    : fault_schedule(seed, std::move(workers)),
      groups_(std::move(groups)),
      lose_grants_(lose_grants),
      fresh_clients_(fresh_clients),
      last_named_master_(groups_.size(), 0) {
    // The essential faults at set points (again as soon as possible if their group was busy).
    // With lose_grants a failover that loses grants comes first, early, while the first
    // holders hold (a master restarted empty first would leave it nothing to lose). A split
    // brain, where the links can be cut, after the group without persistence is done with the
    // two before it.
    const bool split = std::any_of(groups_.begin(), groups_.end(), [](auto& g) { return !!g.partition; });
    const auto add = [this](std::uint64_t at, essential e) {
        essential_at_.push_back(at);
        essentials_.push_back(e);
    };
    if (lose_grants_) {
        add(4, essential::lose_grants);
        add(16, essential::restart_master);
        add(20, essential::worker_pause);
    } else {
        add(5, essential::restart_master);
        add(12, essential::worker_pause);
    }
    if (split) add(24, essential::split_brain);
    add(28, essential::master_down);
    add(40, essential::manual_failover);
}

void failover_faults::inject() {
    if (inject_essential_when_due(essential_at_)) return;
    auto& g = groups_[below(groups_.size())];
    const int roll = uniform(0, 99);
    if (roll < 40) {
        const bool master = uniform(0, 1) == 0;
        const auto fault = static_cast<data_fault>(uniform(0, 2));
        (void)data_server_fault(g, master, fault);
    } else if (roll < 45 || (lose_grants_ && roll < 50)) {
        // The group whose locks wait for no replica loses the grants its replicas lack.
        if (lose_grants_ && !g.persistent) {
            (void)unreplicated_failover(g);
        } else {
            (void)manual_failover(g);
        }
    } else if (roll < 51 && g.partition) {
        (void)split_brain(g);
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
    const auto without_persistence =
        std::find_if(groups_.begin(), groups_.end(), [](auto& x) { return !x.persistent; });
    switch (essentials_.at(which)) {
        case essential::lose_grants:
            return without_persistence == groups_.end() || unreplicated_failover(*without_persistence);
        case essential::restart_master:
            // A master back empty before anyone noticed.
            return without_persistence == groups_.end() ||
                   data_server_fault(*without_persistence, true, data_fault::restart_at_once);
        case essential::worker_pause:
            return worker_pause();
        case essential::split_brain: {
            // Where the holders' locks wait for no replica: nothing but the master's refusal to
            // write without one keeps them from going on beside the promoted master's grants.
            const auto g = std::find_if(groups_.begin(), groups_.end(),
                                        [](auto& x) { return !x.persistent && x.partition; });
            return g == groups_.end() || split_brain(*g);
        }
        case essential::master_down:
            return data_server_fault(groups_[below(groups_.size())], true, data_fault::down_until_failover);
        case essential::manual_failover:
            break;
    }
    return manual_failover(groups_[below(groups_.size())]);
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

bool failover_faults::settled(failover_group& g, const std::string& kind) {
    if (!g.unsettled) return true;
    const auto why = g.unsettled();
    if (why.empty()) return true;
    note(kind + " postponed", g.name + ": " + why);
    return false;
}

bool failover_faults::manual_failover(failover_group& g, const test::redis_server* master) {
    // Only from a settled group: a failover asked while a server is out may not find a replica.
    if (any_out(g.data) || any_out(g.sentinels) || !settled(g, "manual_failover")) return false;
    try {
        const auto what = g.manual_failover(rng_, master);
        count("manual_failover", g.name + ": " + what);
        restarted();
        return true;
    } catch (const std::exception& e) {
        note("manual_failover refused", g.name + ": " + e.what());
        return false;
    }
}

std::vector<test::redis_server*> failover_faults::masters_of(failover_group& g) {
    const auto named = g.sentinels.empty() ? 0 : named_master(g);
    std::vector<test::redis_server*> out;
    for (auto* s : g.data)
        if (g.sentinels.empty() ? role_of(*s) == "master" : s->port() == named) out.push_back(s);
    return out;
}

std::vector<std::string> failover_faults::unreplicate_locks(const test::redis_server& master) {
    // The key is deleted (which replicates) and written back on the master alone, with what is
    // left of its ttl: later writes replicate as usual (a renewal of it does nothing on a
    // replica that lacks it). A key due to expire this very millisecond answers PTTL 0, and
    // RESTORE with 0 keeps a key forever (a sentinel schedule's lock outlived the run): it gets
    // 1 ms. A key without a ttl (-1) keeps none.
    static constexpr const char* script =
        "local t = redis.call('PTTL', KEYS[1]) "
        "if t == -2 then return -2 end "
        "if t == 0 then t = 1 end "
        "if t < 0 then t = 0 end "
        "local d = redis.call('DUMP', KEYS[1]) "
        "redis.call('DEL', KEYS[1]) "
        "redis.set_repl(redis.REPL_NONE) "
        "redis.call('RESTORE', KEYS[1], t, d) "
        "return t";
    std::vector<std::string> lost;
    try {
        for (const auto& key : master.command({"KEYS", "{chaos:*"}, probe_timeout).elements) {
            if (bookkeeping_key(key.str)) continue;
            const auto reply = master.command({"EVAL", script, "1", key.str}, probe_timeout);
            if (!reply.is_error() && reply.integer >= 0) lost.push_back(key.str);
        }
    } catch (const std::exception&) {
        // Stopped answering: the keys done so far are the ones lost.
    }
    return lost;
}

bool failover_faults::unreplicated_failover(failover_group& g) {
    if (g.persistent || any_out(g.data) || any_out(g.sentinels) ||
        !settled(g, "master_unreplicated_failover"))
        return false;
    const auto masters = masters_of(g);
    if (masters.empty()) return false;  // in the middle of a failover
    // Holders paused through the failover (a GC pause) still count on their leases when they
    // wake, whatever the promoted masters granted meanwhile: the quarantine must outlast them.
    // One worker goes on, to ask the promoted masters for what they hold. Sentinel's switch
    // takes about a second here: its holders sleep past it (a holder that wakes before it
    // renews on the old master, and learns of the loss as soon as it follows the switch).
    pause_all_workers_but_one(g.sentinels.empty() ? 0ms : 2000ms);
    bool any = false;
    for (auto* master : masters) {
        std::string lost;
        for (const auto& key : unreplicate_locks(*master))
            lost += (lost.empty() ? "" : " ") + key;
        // A replica's data is always a prefix of its master's: no real replica lacks a key and
        // then gets a later write of it. Through Sentinel's switch the worker left running
        // could make one (a hand-over's write of a key the replica lacks). So the replicas get
        // nothing more from this master, as in the partition the fault stands for, until the
        // switch is over (a cluster's CLUSTER FAILOVER stops the master's writes within
        // milliseconds). The cut comes after the deletions, and a failover it does not bring
        // heals into a partial resync that replays the master's writes of the meantime: the
        // library writes every hold with its expiry, so a replica never makes a key without one.
        if (g.cut_replication) {
            try {
                g.cut_replication(*master, true);
                out_.insert(master);  // no restart before the heal: it would define the user again
                later(g.failure_detection + 2000ms, [this, &g, master] {
                    try {
                        g.cut_replication(*master, false);
                    } catch (const std::exception& e) {
                        note("heal replication cut failed", server_name(g, *master) + ": " + e.what());
                    }
                    out_.erase(master);
                });
            } catch (const std::exception& e) {
                note("replication cut failed", server_name(g, *master) + ": " + e.what());
            }
        }
        try {
            const auto what = g.manual_failover(rng_, master);
            count("master_unreplicated_failover",
                  server_name(g, *master) + ": " + what + "; its replicas lack " + lost);
            any = true;
        } catch (const std::exception& e) {
            // Its keys stay unreplicated: as a partition that healed before any failover.
            note("master_unreplicated_failover refused", server_name(g, *master) + ": " + e.what());
        }
    }
    if (any) restarted();
    return any;
}

bool failover_faults::split_brain(failover_group& g) {
    if (!g.partition || any_out(g.data) || any_out(g.sentinels)) return false;
    // Drawn before the roles are read, as data_server_fault's.
    const auto pick = below(g.data.size());
    const auto stays = below(worker_slots());
    const auto masters = masters_of(g);
    // Sentinel names one master; a cluster with a master more or fewer is failing over.
    if (masters.empty() || (!g.sentinels.empty() && masters.size() != 1)) return false;
    auto* master = masters[pick % masters.size()];
    // With Sentinel, every worker but one on the master's side: they hold and renew there while
    // the sentinels promote a replica, which the one left (and fresh clients) then meet.
    std::vector<std::size_t> cut;
    std::string who;
    for (std::size_t w = 0; w < worker_slots() && !g.sentinels.empty(); ++w) {
        if (w == stays) continue;
        cut.push_back(w);
        who += " " + std::to_string(w);
    }
    const auto target = server_name(g, *master) + (who.empty() ? "" : " and workers" + who);
    try {
        g.partition(*master, cut, true);
    } catch (const std::exception& e) {
        // Healed at once: a half-cut partition is none.
        try {
            g.partition(*master, cut, false);
        } catch (const std::exception&) {
            // The server did not answer: its restart would define the users again.
        }
        note("split_brain refused", target + ": " + e.what());
        return false;
    }
    // Out for other faults: a restart would end the partition early.
    out_.insert(master);
    count("split_brain", target);
    // Long enough for the sentinels or the other masters to find the master down (down-after,
    // cluster-node-timeout), promote a replica, and for the promoted master's failover
    // quarantine to end while the partition lasts.
    later(g.failure_detection + milliseconds(uniform(4000, 6000)), [this, &g, master, cut, target] {
        try {
            g.partition(*master, cut, false);
        } catch (const std::exception& e) {
            note("heal split_brain failed", target + ": " + e.what());
        }
        out_.erase(master);
        restarted();  // the promotion it led to: its quarantine ends max_ttl after this at the latest
        note("heal split_brain", target);
    });
    return true;
}

void failover_faults::observe() {
    const auto now = clock::now();
    if (now < next_look_) return;
    next_look_ = now + 250ms;
    bool any = false;
    for (std::size_t i = 0; i < groups_.size(); ++i) {
        auto& g = groups_[i];
        if (!g.sentinels.empty()) {
            // A replica restarted without its config file says "master" of itself: what the
            // sentinels name is the master.
            const auto port = named_master(g);
            if (port == 0) continue;
            if (last_named_master_[i] != 0 && port != last_named_master_[i]) {
                count("promotion", g.name + " port " + std::to_string(port));
                any = true;
            }
            last_named_master_[i] = port;
            continue;
        }
        for (auto* s : g.data) {
            if (out_.contains(s)) continue;
            const auto role = role_of(*s);
            if (role.empty()) continue;
            auto& last = last_role_[s];
            if (last == "slave" && role == "master") {
                count("promotion", server_name(g, *s));
                any = true;
            }
            last = role;
        }
    }
    // A client that starts now never saw the masters before the switch (one per look: the
    // masters of a group often switch together).
    if (any && fresh_clients_) (void)worker_restart();
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
