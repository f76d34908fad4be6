// SPDX-License-Identifier: BSL-1.0
#include "fault/chaos/fault_injector.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>

namespace redlock::chaos {

using std::chrono::milliseconds;
using mode = test::tcp_proxy::mode;

namespace {
constexpr std::size_t max_servers_out = 2;  // per deployment: 3 of its 5 nodes stay up
}  // namespace

fault_injector::fault_injector(std::uint64_t seed, std::vector<std::unique_ptr<test::redis_server>>& servers,
                               std::vector<std::size_t> deployment, std::vector<bool> persistent,
                               std::vector<std::vector<std::unique_ptr<test::tcp_proxy>>>& proxies,
                               std::vector<pid_t> workers)
    : fault_schedule(seed, std::move(workers)),
      servers_(servers),
      deployment_(std::move(deployment)),
      persistent_(std::move(persistent)),
      proxies_(proxies) {}

std::vector<std::size_t> fault_injector::available_servers() const {
    std::vector<std::size_t> out;
    for (std::size_t n = 0; n < servers_.size(); ++n)
        if (!servers_out_.contains(n)) out.push_back(n);
    return out;
}

std::string fault_injector::node_name(std::size_t n) const {
    std::size_t index = 0;  // within its deployment, as the workers number their nodes
    for (std::size_t i = 0; i < n; ++i)
        index += deployment_[i] == deployment_[n] ? 1 : 0;
    return "deployment " + std::to_string(deployment_[n]) + " node " + std::to_string(index);
}

std::size_t fault_injector::out_in_deployment(std::size_t d) const {
    return static_cast<std::size_t>(std::count_if(servers_out_.begin(), servers_out_.end(),
                                                  [&](std::size_t n) { return deployment_[n] == d; }));
}

milliseconds fault_injector::heal_after() {
    return milliseconds(uniform(200, 1500));
}

void fault_injector::heal_all() {
    fault_schedule::heal_all();
    for (auto& per_worker : proxies_)
        for (auto& proxy : per_worker)
            proxy->heal();
}

void fault_injector::inject() {
    // A paused worker, a server restarted empty, then twice a quorum restarted empty at once, so
    // that no schedule lacks one by chance; the rest at random.
    constexpr std::array<std::uint64_t, 4> essential_at = {3, 10, 20, 45};
    if (inject_essential_when_due(essential_at)) return;
    const int roll = uniform(0, 99);
    if (roll < 45) {
        network_fault();
    } else if (roll < 55) {
        partition();
    } else if (roll < 75) {
        server_fault();
    } else if (roll < 85) {
        worker_pause();
    } else if (roll < 93) {
        server_command({"SCRIPT", "FLUSH"}, "script_flush");
    } else {
        server_command({"CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"}, "client_kill");
    }
}

bool fault_injector::inject_essential(std::size_t which) {
    if (which == 0) return worker_pause();
    if (which >= 2) return restart_quorum_empty();
    // A server without AOF back empty, in a deployment that can lose one more node now.
    for (const auto n : available_servers()) {
        if (!persistent_[n] && out_in_deployment(deployment_[n]) < max_servers_out) {
            restart(n);
            return true;
        }
    }
    return false;
}

void fault_injector::network_fault() {
    const auto w = below(proxies_.size());
    const auto n = below(servers_.size());
    test::tcp_proxy* p = proxies_[w][n].get();
    const std::string target = "worker " + std::to_string(w) + " -> " + node_name(n);
    std::string kind;
    switch (uniform(0, 8)) {
        case 0:
            kind = "latency";
            p->set_request_delay(milliseconds(uniform(5, 60)));
            p->set_reply_delay(milliseconds(uniform(5, 120)));
            p->set_jitter(milliseconds(uniform(0, 40)));
            break;
        case 1:
            kind = "blackhole";
            p->set_mode(mode::blackhole);
            break;
        case 2:
            kind = "drop_replies";
            p->set_mode(mode::drop_replies);
            break;
        case 3:
            kind = "drop_requests";
            p->set_mode(mode::drop_requests);
            break;
        case 4:
            count("reset", target);
            p->reset_connections();
            return;  // nothing to heal
        case 5:
            kind = "slice";
            p->set_slice(true);
            break;
        case 6:
            kind = "cut_reply";
            p->cut_replies_after(uniform(1, 200));
            break;
        case 7:
            kind = "cut_request";
            p->cut_requests_after(uniform(1, 200));
            break;
        default: {
            // Bytes held, and delivered when it heals: a request (and its cleanup) that reaches
            // the server after later rounds did. Past 4 s of silence (two health-check
            // intervals) the worker has given the connection up: its bytes arrive all the same.
            count("held_requests", target);
            p->hold_requests();
            later(milliseconds(uniform(300, 5000)), [this, p, target] {
                p->heal();
                note("heal held_requests", target);
            });
            return;
        }
    }
    count(kind, target);
    later(heal_after(), [this, p, kind, target] {
        p->heal();
        note("heal " + kind, target);
    });
}

void fault_injector::partition() {
    const auto w = below(proxies_.size());
    std::vector<std::size_t> nodes(servers_.size());
    for (std::size_t i = 0; i < nodes.size(); ++i)
        nodes[i] = i;
    std::shuffle(nodes.begin(), nodes.end(), rng_);
    nodes.resize(static_cast<std::size_t>(uniform(2, 3)));
    // Asymmetric: each cut link loses one direction or both.
    const mode modes[] = {mode::blackhole, mode::drop_replies, mode::drop_requests};
    std::vector<test::tcp_proxy*> cut;
    std::string target = "worker " + std::to_string(w) + " ->";
    for (auto n : nodes) {
        auto* p = proxies_[w][n].get();
        p->set_mode(modes[uniform(0, 2)]);
        cut.push_back(p);
        target += ", " + node_name(n);
    }
    count("partition", target);
    later(heal_after(), [this, cut, target] {
        for (auto* p : cut)
            p->heal();
        note("heal partition", target);
    });
}

void fault_injector::server_fault() {
    const auto candidates = available_servers();
    if (candidates.empty()) return;
    const auto n = candidates[below(candidates.size())];
    if (out_in_deployment(deployment_[n]) >= max_servers_out) return;
    if (uniform(0, 1) == 0) {
        auto* server = servers_[n].get();
        servers_out_.insert(n);
        count("server_pause", node_name(n));
        server->pause();
        later(milliseconds(uniform(200, 1500)), [this, server, n] {
            server->resume();
            servers_out_.erase(n);
            note("heal server_pause", node_name(n));
        });
    } else {
        restart(n);
    }
}

void fault_injector::restart(std::size_t n) {
    auto* server = servers_[n].get();
    servers_out_.insert(n);
    // The AOF servers (fsync always) keep what they granted; the others lose it.
    count(persistent_[n] ? "server_restart_aof" : "server_restart_empty", node_name(n));
    server->kill9();
    later(milliseconds(uniform(0, 500)), [this, server, n] {
        server->restart();
        restarted();
        servers_out_.erase(n);
        note("heal restarted", node_name(n));
    });
}

bool fault_injector::restart_quorum_empty() {
    const auto deployments = *std::max_element(deployment_.begin(), deployment_.end()) + 1;
    for (std::size_t d = 0; d < deployments; ++d) {
        std::vector<std::size_t> forgetful;
        std::size_t nodes = 0;
        for (std::size_t n = 0; n < servers_.size(); ++n) {
            if (deployment_[n] != d) continue;
            ++nodes;
            if (!persistent_[n]) forgetful.push_back(n);
        }
        // A quorum of the deployment's nodes, and none of them out already.
        if (forgetful.size() < nodes / 2 + 1 || out_in_deployment(d) > 0) continue;
        // A worker asleep through it keeps counting its holds (a GC pause): with the quarantine,
        // no rival is granted what they forgot before those holds' validity is over.
        (void)worker_pause();
        count("quorum_restart_empty", "deployment " + std::to_string(d));
        for (const auto n : forgetful)
            restart(n);
        return true;
    }
    return false;
}

void fault_injector::server_command(const std::vector<std::string>& command, const std::string& kind) {
    const auto candidates = available_servers();
    if (candidates.empty()) return;
    const auto n = candidates[below(candidates.size())];
    try {
        (void)servers_[n]->command(command);
        count(kind, node_name(n));
    } catch (const std::exception&) {
        // A server that could not answer now: the fault simply did not happen.
    }
}

}  // namespace redlock::chaos
