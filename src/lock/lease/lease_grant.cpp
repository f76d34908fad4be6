// SPDX-License-Identifier: BSL-1.0
#include "lock/lease/lease_grant.hpp"

#include "lock/lease/lease_runner.hpp"

namespace redlock::detail {

std::shared_ptr<lease_state> grant_lease(const std::shared_ptr<client_state>& client, won_lock won,
                                         const lock_options& options,
                                         std::chrono::steady_clock::time_point now) {
    auto state = std::make_shared<lease_state>(client->config().drift_factor);
    state->client = client;
    state->resource = std::move(won.resource);
    state->kind = std::move(won.kind);
    state->token = std::move(won.token);
    state->fence = won.fence;
    state->fences = std::move(won.fences);
    if (state->kind->reenters_fenced())
        client->holds().add(state->kind->keys().lock, std::string(state->kind->owner()), state);
    state->node_timeout = won.node_timeout;
    state->replicas = options.replicas;
    state->replica_timeout = options.replica_timeout;
    state->set_valid_until(won.valid_until, won.suspended_at_start);
    state->fsm.set_nodes_granted(static_cast<unsigned>(won.nodes_granted));
    state->granted_at = now;
    client->work().add(state);
    std::optional<watchdog_schedule> schedule;
    if (options.watchdog)
        schedule.emplace(options.ttl, options.renew_every, options.max_hold, won.node_timeout, now);
    resume_lease(state, lease_input::started(
                            schedule, won.extend_now ? options.ttl : std::chrono::milliseconds::zero()));
    return state;
}

}  // namespace redlock::detail
