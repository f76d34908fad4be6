// SPDX-License-Identifier: BSL-1.0
#include "lock/acquire/start_acquire.hpp"
#include "lock/admin/resource_admin.hpp"
#include "lock/client/client_close.hpp"
#include "lock/client/client_state.hpp"
#include "lock/lease/adopt_op.hpp"
#include <redlock/client.hpp>
#include <redlock/error.hpp>

#include <boost/system/system_error.hpp>

namespace redlock {

namespace {

client_config validated(client_config cfg) {
    std::string why;
    if (auto ec = cfg.validate(why)) throw boost::system::system_error(ec, why);
    return cfg;
}

}  // namespace

client::client(executor_type ex, client_config cfg)
    : state_(detail::client_state::make(std::move(ex), validated(std::move(cfg)))) {}

client::~client() = default;

client::executor_type client::get_executor() const noexcept {
    return state_->executor();
}
const client_config& client::config() const noexcept {
    return state_->config();
}
std::size_t client::node_count() const noexcept {
    return state_->node_count();
}
metrics_snapshot client::metrics() const {
    auto s = state_->metrics().snapshot();
    s.event_callback_failures = state_->events().failures();
    for (std::size_t i = 0; i < s.nodes.size() && i < state_->node_count(); ++i) {
        auto& n = s.nodes[i];
        if (const auto* cluster = state_->link(i).cluster()) {
            const auto stats = cluster->stats();
            n.cluster_masters = stats.masters;
            n.cluster_connections = stats.connections;
            n.cluster_moved = stats.moved;
            n.cluster_asked = stats.asked;
            n.cluster_tryagain = stats.tryagain;
            n.cluster_refreshes = stats.refreshes;
        }
        if (const auto* sentinels = state_->link(i).sentinels()) {
            if (const auto master = sentinels->last_master())
                n.sentinel_master = redis::detail::endpoint(*master);
            n.sentinel_switches = sentinels->switches();
        }
        auto view = state_->health_of(i);
        n.voting = view.voting;
        n.quarantine_left_ms = view.quarantine_left.count();
        n.run_id = std::move(view.run_id);
        n.last_error = std::move(view.problem);
        if (n.last_error.empty()) {
            const auto last = state_->link(i).last_error();
            if (last.code) n.last_error = last.message.empty() ? last.code.message() : last.message;
        }
    }
    return s;
}

void client::async_acquire_impl(std::string resource, lock_options options, diagnostics* diag,
                                acquire_handler h) {
    if (diag) diag->clear();
    detail::start_acquire(state_, std::move(resource), std::move(options), diag, std::move(h));
}

void client::async_acquire_all_impl(std::vector<std::string> resources, lock_options options,
                                    diagnostics* diag, acquire_handler h) {
    if (diag) diag->clear();
    detail::start_acquire_all(state_, std::move(resources), std::move(options), diag, std::move(h));
}

void client::async_adopt_impl(std::string text, lock_options options, diagnostics* diag, acquire_handler h) {
    if (diag) diag->clear();
    detail::start_adopt(state_, std::move(text), std::move(options), diag, std::move(h));
}

void client::async_inspect_impl(std::string resource, inspect_handler h) {
    detail::start_inspect(state_, std::move(resource), std::move(h));
}

void client::async_force_release_impl(std::string resource, force_release_handler h) {
    detail::start_force_release(state_, std::move(resource), std::move(h));
}

void client::async_close_impl(close_options options, close_handler h) {
    detail::start_close(state_, options.release_leases, std::move(h));
}

}  // namespace redlock
