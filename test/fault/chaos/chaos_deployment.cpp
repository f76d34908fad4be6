// SPDX-License-Identifier: BSL-1.0
#include "fault/chaos/chaos_deployment.hpp"

namespace redlock::chaos {

std::string_view to_string(topology t) noexcept {
    switch (t) {
        case topology::cluster:
            return "cluster";
        case topology::sentinel:
            return "sentinel";
        case topology::masters:
            break;
    }
    return "masters";
}

std::optional<topology> parse_topology(std::string_view name) noexcept {
    for (const auto t : {topology::masters, topology::cluster, topology::sentinel})
        if (to_string(t) == name) return t;
    return std::nullopt;
}

test::redis_server_options data_server_options(bool persistent) {
    test::redis_server_options o;
    if (persistent) {
        o.appendonly = true;
        o.appendfsync = "always";
    }
    return o;
}

std::vector<std::string> essential_faults(topology t) {
    if (t == topology::masters) return {"server_restart_empty", "quorum_restart_empty", "worker_pause"};
    std::vector<std::string> kinds = {"master_restart_empty",
                                      "master_unreplicated_failover",
                                      "master_down_failover",
                                      "manual_failover",
                                      "promotion",
                                      "worker_pause",
                                      "worker_fresh_restart"};
    kinds.push_back("split_brain");
    return kinds;
}

std::unique_ptr<chaos_deployment> make_deployment(topology t, int workers, bool min_replicas_to_write) {
    switch (t) {
        case topology::cluster:
            return make_cluster_deployment();
        case topology::sentinel:
            return make_sentinel_deployment(workers, min_replicas_to_write);
        case topology::masters:
            break;
    }
    return make_masters_deployment(workers);
}

}  // namespace redlock::chaos
