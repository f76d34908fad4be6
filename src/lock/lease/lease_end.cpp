// SPDX-License-Identifier: BSL-1.0
#include "lock/lease/lease_end.hpp"

#include "lock/lease/lost_waiter.hpp"
#include "lock/lease/watchdog.hpp"
#include <redlock/error.hpp>

#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>

#include <algorithm>

namespace redlock::detail {

namespace asio = boost::asio;
using boost::system::error_code;
using clock = std::chrono::steady_clock;

void end_lease(lease_state& state, error_code reason, std::string_view why) {
    if (state.ended) return;
    state.ended = true;
    state.end_reason = reason;
    auto& metrics = state.client->metrics();
    if (reason == error::lock_lost) metrics.leases_lost.fetch_add(1, std::memory_order_relaxed);
    const auto held = clock::now() - state.granted_at;
    metrics.hold_time.record(held);
    const auto& events = state.client->events();
    if (auto dog = std::move(state.dog)) {
        dog->stop();
        if (events.wanted())
            events.emit(
                resource_event(event_kind::watchdog_stopped, state.resource, reason, std::string(why)));
    }
    if (events.wanted()) {
        // A lease kept by client::async_close, or handed over, ends as released: it was not lost.
        const bool lost = reason && reason != error::client_closed && reason != error::handed_over;
        events.emit(resource_event(lost ? event_kind::lease_lost : event_kind::released, state.resource,
                                   reason, std::string(why),
                                   lost ? std::chrono::milliseconds::zero()
                                        : std::chrono::duration_cast<std::chrono::milliseconds>(held)));
    }
    if (state.validity_timer) state.validity_timer->cancel();
    auto waiters = std::move(state.lost_waiters);
    state.lost_waiters.clear();
    for (auto& w : waiters)
        w->complete(reason);
}

void post_end_lease(const std::shared_ptr<lease_state>& state, error_code reason,
                    std::string_view why) noexcept {
    try {
        // `why` is one of lease_lifecycle's describe() texts: static, it outlives the post.
        asio::post(state->client->strand(), [state, reason, why] { end_lease(*state, reason, why); });
    } catch (...) {
        // Out of memory: the watchdog then stops at its next tick, when it finds the lease not held.
    }
}

bool give_up(const std::shared_ptr<lease_state>& state, lease_event event) noexcept {
    const auto actions = state->apply(event);
    if (actions.next == lease_phase::held || !actions.end) return false;
    if (actions.send_release) {
        try {
            state->send_release(state->client->background_timeout(), {});
        } catch (...) {
            // Out of memory while queueing the release: the keys expire with their ttl.
        }
    }
    post_end_lease(state, actions.reason, describe(event));
    return true;
}

void watch_validity(const std::shared_ptr<lease_state>& state) {
    if (state->ended) return;
    if (!state->validity_timer) state->validity_timer.emplace(state->client->strand());
    state->validity_timer->expires_at(state->valid_until_time());
    state->validity_timer->async_wait([state](error_code ec) {
        if (ec || state->ended) return;  // re-armed, or the lease ended
        if (clock::now() < state->valid_until_time()) {
            watch_validity(state);  // extended meanwhile
            return;
        }
        // No quorum confirmed an extension in time: our keys may have expired on a majority,
        // so somebody else may hold the resource now. If the lease is no longer held, whoever
        // moved it ends it.
        give_up(state, lease_event::validity_passed);
    });
}

}  // namespace redlock::detail
