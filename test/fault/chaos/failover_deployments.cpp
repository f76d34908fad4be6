// SPDX-License-Identifier: BSL-1.0
// The `cluster` and `sentinel` topologies (chaos_deployment.hpp): deployments that fail over by
// themselves, one voter each, the workers connected straight to the data servers
// (failover_faults.hpp says why there is no proxy); with Sentinel, through proxies to the
// sentinels.
#include "fault/chaos/chaos_deployment.hpp"
#include "fault/chaos/failover_faults.hpp"
#include "support/fixture_commands.hpp"
#include "support/redis_cluster.hpp"
#include "support/redis_sentinel.hpp"
#include "support/tcp_proxy.hpp"

#include <stdexcept>

namespace redlock::chaos {

using namespace std::chrono_literals;

namespace {

// The default user's password on the Sentinel topology's data servers.
constexpr const char* data_password = "chaos";

// Short failure detection, so that a schedule of 20 s sees failovers and recovers from them.
constexpr auto cluster_node_timeout = 2000ms;

// Whether `s` is a replica (of `master`, if given): ROLE answers "slave", its master's address,
// port, state and offset.
bool is_replica_of(const test::redis_server& s, const test::redis_server* master) {
    try {
        const auto reply = s.command({"ROLE"}, 500ms);
        if (reply.elements.size() < 3 || reply.elements[0].str != "slave") return false;
        return master == nullptr || reply.elements[2].integer == master->port();
    } catch (const std::exception&) {
        return false;  // not answering now
    }
}

class cluster_deployment final : public chaos_deployment {
public:
    cluster_deployment() {
        for (const bool persistent : {false, true}) {
            test::redis_cluster_options o;
            o.server = data_server_options(persistent);
            o.server.extra_args = {"--cluster-node-timeout", std::to_string(cluster_node_timeout.count())};
            o.partitionable = true;  // the split brain
            clusters_.push_back(std::make_unique<test::redis_cluster>(o));
        }
    }

    std::vector<std::string> direct_nodes(bool fenced) const override {
        return {clusters_[fenced ? 1 : 0]->uri()};
    }
    int fenced_replicas() const noexcept override { return 1; }

    std::unique_ptr<fault_schedule> faults(std::uint64_t seed, std::vector<pid_t> workers) override {
        std::vector<failover_group> groups;
        for (std::size_t c = 0; c < clusters_.size(); ++c) {
            auto& cluster = *clusters_[c];
            failover_group g;
            g.name = "cluster " + std::to_string(c);
            for (std::size_t i = 0; i < cluster.size(); ++i)
                g.data.push_back(&cluster.server(i));
            g.persistent = c == 1;
            g.failure_detection = cluster_node_timeout;
            g.manual_failover = [&cluster](std::mt19937_64& rng, const test::redis_server* master) {
                // A replica asks its master to hand over (no write lost); it gives up after 5 s
                // if the master or the other masters do not answer.
                std::vector<test::redis_server*> replicas;
                for (std::size_t i = 0; i < cluster.size(); ++i)
                    if (is_replica_of(cluster.server(i), master)) replicas.push_back(&cluster.server(i));
                if (replicas.empty()) throw std::runtime_error("no replica");
                auto* r = replicas[rng() % replicas.size()];
                const auto reply = r->command({"CLUSTER", "FAILOVER"}, 500ms);
                if (reply.is_error()) throw std::runtime_error(reply.str);
                return "CLUSTER FAILOVER on port " + std::to_string(r->port());
            };
            // Every worker reaches every node of a cluster, whatever its bus does: no worker is
            // on a side, and the one cut off still answers those whose slot map sends them to it.
            g.partition = [&cluster](test::redis_server& master, const std::vector<std::size_t>&, bool cut) {
                if (cut) {
                    cluster.cut_off(master);
                } else {
                    cluster.rejoin(master);
                }
            };
            groups.push_back(std::move(g));
        }
        return std::make_unique<failover_faults>(seed, std::move(groups), std::move(workers), true, true);
    }

    void settle() override {
        for (auto& c : clusters_)
            c->wait_until_ok(30s);
    }

    std::vector<const test::redis_server*> key_servers() override {
        std::vector<const test::redis_server*> out;
        for (auto& c : clusters_)
            for (auto* m : c->masters())
                out.push_back(m);
        return out;
    }

private:
    std::vector<std::unique_ptr<test::redis_cluster>> clusters_;  // unfenced kinds, fenced kinds
};

class sentinel_deployment final : public chaos_deployment {
public:
    sentinel_deployment(int workers, bool min_replicas_to_write) {
        for (const bool persistent : {false, true}) {
            test::redis_sentinel_options o;
            o.server = data_server_options(persistent);
            // A master cut from its replicas refuses writes at once (its replicas' links are
            // closed; in a real partition within a second or two): the grants and renewals
            // of the holders on its side stop before a replica is promoted (down_after).
            if (min_replicas_to_write) {
                o.server.extra_args.insert(o.server.extra_args.end(),
                                           {"--min-replicas-to-write", "1", "--min-replicas-max-lag", "1"});
            }
            // The replicas and the sentinels log in as users of their own, which a split
            // brain deletes on the master; the workers with the default user's password.
            o.own_users = true;
            o.server.extra_args.insert(o.server.extra_args.end(), {"--requirepass", data_password});
            groups_.push_back(std::make_unique<test::redis_sentinel_group>(o));
        }
        // Each worker reaches the sentinels through proxies of its own, which a partition cuts;
        // the data servers directly, at the addresses the sentinels name.
        for (auto& group : groups_) {
            std::vector<std::vector<std::unique_ptr<test::tcp_proxy>>> per_worker(
                static_cast<std::size_t>(workers));
            for (auto& proxies : per_worker)
                for (std::size_t i = 0; i < group->sentinels(); ++i)
                    proxies.push_back(std::make_unique<test::tcp_proxy>(group->sentinel(i).port()));
            sentinel_proxies_.push_back(std::move(per_worker));
        }
    }

    std::vector<std::string> worker_nodes(std::size_t w, bool fenced) const override {
        const auto g = fenced ? 1 : 0;
        std::string addresses;
        for (const auto& proxy : sentinel_proxies_[g].at(w))
            addresses +=
                (addresses.empty() ? "" : ",") + std::string("127.0.0.1:") + std::to_string(proxy->port());
        return {"redis-sentinel://:" + std::string(data_password) + "@" + addresses + "#" +
                groups_[g]->options().master_name};
    }
    std::vector<std::string> direct_nodes(bool fenced) const override {
        return {groups_[fenced ? 1 : 0]->uri()};
    }
    // Every replica: the sentinels promote the one they find most up to date, which need not be
    // one that acknowledged a WAIT for fewer (a replica restarted meanwhile, say). With
    // replicas = 1 of 2, `scripts/chaos --topology sentinel` saw a fence go back from 9 to 8
    // after such a failover (seed 103).
    int fenced_replicas() const noexcept override { return static_cast<int>(groups_[1]->options().replicas); }

    std::unique_ptr<fault_schedule> faults(std::uint64_t seed, std::vector<pid_t> workers) override {
        std::vector<failover_group> out;
        for (std::size_t i = 0; i < groups_.size(); ++i) {
            auto& group = *groups_[i];
            failover_group g;
            g.name = "sentinel group " + std::to_string(i);
            for (std::size_t d = 0; d < group.data_servers(); ++d)
                g.data.push_back(&group.data_server(d));
            for (std::size_t s = 0; s < group.sentinels(); ++s)
                g.sentinels.push_back(&group.sentinel(s));
            g.sentinel_master_name = group.options().master_name;
            g.persistent = i == 1;
            g.failure_detection = group.options().down_after;
            g.manual_failover = [&group](std::mt19937_64& rng, const test::redis_server*) {
                // Of the group's one master. A failover the sentinels start without agreement;
                // the old master goes on answering as a master until they convert it
                // (redis_sentinel.hpp).
                auto& s = group.sentinel(rng() % group.sentinels());
                const auto reply = s.command({"SENTINEL", "FAILOVER", group.options().master_name}, 500ms);
                if (reply.is_error()) throw std::runtime_error(reply.str);
                return "SENTINEL FAILOVER on port " + std::to_string(s.port());
            };
            g.unsettled = [&group] { return group.unstable(); };
            g.cut_replication = [&group](test::redis_server& master, bool cut) {
                if (!cut) {
                    test::fixture::define_own_user("chaos", master,
                                                   test::redis_sentinel_group::replication_user);
                    return;
                }
                // The replicas have what the fault deleted before they lose the link.
                (void)master.command({"WAIT", std::to_string(group.data_servers() - 1), "1000"});
                test::fixture::delete_own_users("chaos", master,
                                                {test::redis_sentinel_group::replication_user});
            };
            g.partition = [this, i](test::redis_server& master, const std::vector<std::size_t>& slots,
                                    bool cut) {
                auto& group = *groups_[i];
                std::size_t d = 0;
                while (d < group.data_servers() && &group.data_server(d) != &master)
                    ++d;
                if (d == group.data_servers()) throw std::runtime_error("not a data server of the group");
                const auto mode = cut ? test::tcp_proxy::mode::blackhole : test::tcp_proxy::mode::pass;
                // The workers first, so that none of them hears of the failover before it
                // begins; the master first on the way back, as its clients' partition heals.
                if (!cut) group.rejoin(d);
                for (const auto slot : slots)
                    for (auto& proxy : sentinel_proxies_[i].at(slot))
                        proxy->set_mode(mode);
                if (cut) group.cut_off(d);
            };
            out.push_back(std::move(g));
        }
        return std::make_unique<failover_faults>(seed, std::move(out), std::move(workers), true, true);
    }

    void settle() override {
        for (auto& g : groups_) {
            g->wait_until_stable(30s);
            g->wait_until_replicas_linked(30s);
        }
    }

    std::vector<const test::redis_server*> key_servers() override {
        std::vector<const test::redis_server*> out;
        for (auto& g : groups_)
            out.push_back(&g->master());
        return out;
    }

private:
    std::vector<std::unique_ptr<test::redis_sentinel_group>> groups_;  // unfenced kinds, fenced kinds
    // [group][worker slot][sentinel]
    std::vector<std::vector<std::vector<std::unique_ptr<test::tcp_proxy>>>> sentinel_proxies_;
};

}  // namespace

std::unique_ptr<chaos_deployment> make_cluster_deployment() {
    return std::make_unique<cluster_deployment>();
}

std::unique_ptr<chaos_deployment> make_sentinel_deployment(int workers, bool min_replicas_to_write) {
    return std::make_unique<sentinel_deployment>(workers, min_replicas_to_write);
}

}  // namespace redlock::chaos
