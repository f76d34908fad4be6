// SPDX-License-Identifier: BSL-1.0
// The `masters` topology: two Redlock deployments of five independent masters (chaos_deployment.hpp),
// every worker reaching every server through a tcp_proxy of its own, so that the network faults
// hit one client-node pair at a time.
#include "fault/chaos/chaos_deployment.hpp"
#include "fault/chaos/fault_injector.hpp"
#include "support/tcp_proxy.hpp"

namespace redlock::chaos {

namespace {

constexpr std::size_t nodes_per_deployment = 5;

class masters_deployment final : public chaos_deployment {
public:
    explicit masters_deployment(int workers) {
        // The plain deployment: nodes 0-2 without persistence, 3-4 with AOF. The fenced one:
        // AOF with fsync always everywhere.
        for (std::size_t n = 0; n < 2 * nodes_per_deployment; ++n) {
            const bool keeps_data = n >= 3;
            servers_.push_back(std::make_unique<test::redis_server>(data_server_options(keeps_data)));
            deployment_.push_back(n / nodes_per_deployment);
            persistent_.push_back(keeps_data);
        }
        proxies_.resize(static_cast<std::size_t>(workers));
        for (auto& per_worker : proxies_)
            for (const auto& s : servers_)
                per_worker.push_back(std::make_unique<test::tcp_proxy>(s->port()));
    }

    std::vector<std::string> worker_nodes(std::size_t w, bool fenced) const override {
        std::vector<std::string> out;
        for (std::size_t n = 0; n < servers_.size(); ++n)
            if (deployment_[n] == (fenced ? 1u : 0u)) out.push_back(proxies_[w][n]->uri());
        return out;
    }

    std::vector<std::string> direct_nodes(bool fenced) const override {
        std::vector<std::string> out;
        for (std::size_t n = 0; n < servers_.size(); ++n)
            if (deployment_[n] == (fenced ? 1u : 0u)) out.push_back(servers_[n]->uri());
        return out;
    }

    std::unique_ptr<fault_schedule> faults(std::uint64_t seed, std::vector<pid_t> workers) override {
        return std::make_unique<fault_injector>(seed, servers_, deployment_, persistent_, proxies_,
                                                std::move(workers));
    }

    std::vector<const test::redis_server*> key_servers() override {
        std::vector<const test::redis_server*> out;
        for (const auto& s : servers_)
            out.push_back(s.get());
        return out;
    }

private:
    std::vector<std::unique_ptr<test::redis_server>> servers_;  // plain deployment first, then fenced
    std::vector<std::size_t> deployment_;
    std::vector<bool> persistent_;
    std::vector<std::vector<std::unique_ptr<test::tcp_proxy>>> proxies_;  // [worker][server]
};

}  // namespace

std::unique_ptr<chaos_deployment> make_masters_deployment(int workers) {
    return std::make_unique<masters_deployment>(workers);
}

}  // namespace redlock::chaos
