// SPDX-License-Identifier: BSL-1.0
#include "lock/lease/lease_grant.hpp"

#include "lock/lease/lease_ops.hpp"
#include "lock/lease/watchdog.hpp"

#include <boost/asio/bind_executor.hpp>

namespace redlock::detail {

std::shared_ptr<lease_state> grant_lease(const std::shared_ptr<client_state>& client, won_lock won,
                                         const lock_options& options,
                                         std::chrono::steady_clock::time_point now) {
    auto state = std::make_shared<lease_state>();
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
    state->nodes_granted.store(static_cast<unsigned>(won.nodes_granted), std::memory_order_relaxed);
    state->granted_at = now;
    client->work().add(state);
    if (options.watchdog) {
        state->dog = std::make_shared<watchdog>(
            state,
            watchdog_schedule(options.ttl, options.renew_every, options.max_hold, won.node_timeout, now));
        state->dog->start();
    }
    if (won.extend_now)
        start_extend(state, options.ttl, nullptr,
                     boost::asio::bind_executor(client->strand(), [](boost::system::error_code) {}));
    return state;
}

}  // namespace redlock::detail
