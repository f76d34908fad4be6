// SPDX-License-Identifier: BSL-1.0
#include "lock/lease/lease_runner.hpp"

#include "lock/lease/lease_rounds.hpp"
#include "lock/lease/lost_waiter.hpp"
#include <redlock/error.hpp>

#include <boost/asio/post.hpp>

#include <utility>

namespace redlock::detail {

namespace {

namespace asio = boost::asio;
using boost::system::error_code;
using clock = std::chrono::steady_clock;

void arm(const std::shared_ptr<lease_state>& state, std::unique_ptr<asio::steady_timer>& timer,
         const lease_step& s, lease_input::type fired) {
    if (!timer) timer = std::make_unique<asio::steady_timer>(state->client->strand());
    timer->expires_at(s.at);
    // Held weakly: the lease's owner decides its life, and a lease dropped ends on its own.
    timer->async_wait([weak = std::weak_ptr<lease_state>(state), fired, id = s.id](error_code ec) {
        if (ec) return;  // armed again, or the lease ended
        if (auto state = weak.lock()) resume_lease(state, lease_input::fired(fired, id));
    });
}

void count(lease_state& state, lease_count what) {
    auto& metrics = state.client->metrics();
    switch (what) {
        case lease_count::extended:
            metrics.extended.fetch_add(1, std::memory_order_relaxed);
            return;
        case lease_count::extend_failed:
            metrics.extend_failed.fetch_add(1, std::memory_order_relaxed);
            return;
        case lease_count::watchdog_renewal:
            metrics.watchdog_renewals.fetch_add(1, std::memory_order_relaxed);
            return;
        case lease_count::watchdog_started:
            metrics.watchdogs_running.fetch_add(1, std::memory_order_relaxed);
            return;
    }
}

// The round of extend `id`, taken out of the registry when `take`; rounds already freed go too.
std::shared_ptr<extend_round> find_extend(lease_state& state, std::uint64_t id, bool take) {
    std::shared_ptr<extend_round> found;
    std::erase_if(state.extends, [&](const auto& weak) {
        auto round = weak.lock();
        if (!round) return true;
        if (round->id() != id) return false;
        found = std::move(round);
        return take;
    });
    return found;
}

void send_extend(const std::shared_ptr<lease_state>& state, const lease_step& s) {
    auto round = find_extend(*state, s.id, false);
    if (!round) {
        // The machine's own extend (the watchdog's, a hand-off's): nobody waits for it.
        round = std::make_shared<extend_round>(state, s.id, s.ttl, nullptr, lease_handler{});
        state->extends.push_back(round);
    }
    round->send();
}

void finish_extend(lease_state& state, const lease_step& s) {
    if (const auto round = find_extend(state, s.id, true)) round->finish(s.ec, s.text);
}

void send_release(lease_state& state, const lease_step& s) {
    if (s.answered && state.release) {
        std::exchange(state.release, {})->send();
        return;
    }
    try {
        state.send_release(state.client->background_timeout(), {});
    } catch (...) {
        // Out of memory while queueing a release nobody waits for: the keys expire with their ttl,
        // and the lease still ends.
    }
}

void end(lease_state& state, const lease_step& s) {
    auto& metrics = state.client->metrics();
    if (s.ec == error::lock_lost) metrics.leases_lost.fetch_add(1, std::memory_order_relaxed);
    const auto held = clock::now() - state.granted_at;
    metrics.hold_time.record(held);
    const auto& events = state.client->events();
    if (s.watchdog_ran) {
        metrics.watchdogs_running.fetch_sub(1, std::memory_order_relaxed);
        if (events.wanted())
            events.emit(
                resource_event(event_kind::watchdog_stopped, state.resource, s.ec, std::string(s.text)));
    }
    if (events.wanted()) {
        // A lease kept by client::async_close, or handed over, ends as released: it was not lost.
        const bool lost = s.ec && s.ec != error::client_closed && s.ec != error::handed_over;
        events.emit(resource_event(lost ? event_kind::lease_lost : event_kind::released, state.resource, s.ec,
                                   std::string(s.text),
                                   lost ? std::chrono::milliseconds::zero()
                                        : std::chrono::duration_cast<std::chrono::milliseconds>(held)));
    }
    if (state.tick_timer) state.tick_timer->cancel();
    if (state.validity_timer) state.validity_timer->cancel();
    auto waiters = std::move(state.lost_waiters);
    state.lost_waiters.clear();
    for (auto& w : waiters)
        w->complete(s.ec);
}

/// The time of a lease: the steady clock, and its state's suspension reading.
class lease_time final : public lease_clock {
public:
    explicit lease_time(const lease_state& state) noexcept : state_(state) {}
    [[nodiscard]] clock::time_point now() const noexcept override { return clock::now(); }
    [[nodiscard]] std::chrono::nanoseconds suspended() const noexcept override { return state_.suspension(); }

private:
    const lease_state& state_;
};

void run(const std::shared_ptr<lease_state>& state, const lease_step& s) {
    switch (s.what) {
        case lease_step::type::send_extend:
            return send_extend(state, s);
        case lease_step::type::send_release:
            return send_release(*state, s);
        case lease_step::type::arm_tick:
            return arm(state, state->tick_timer, s, lease_input::type::tick);
        case lease_step::type::arm_validity:
            return arm(state, state->validity_timer, s, lease_input::type::validity_due);
        case lease_step::type::count:
            return count(*state, s.counted);
        case lease_step::type::extend_failed:
            if (state->client->events().wanted())
                state->client->events().emit(
                    resource_event(event_kind::extend_failed, state->resource, s.ec, std::string(s.text)));
            return;
        case lease_step::type::finish_extend:
            return finish_extend(*state, s);
        case lease_step::type::end:
            return end(*state, s);
    }
}

}  // namespace

void resume_lease(const std::shared_ptr<lease_state>& state, lease_input in) {
    if (state->running) {
        state->deferred.push_back(std::move(in));
        return;
    }
    state->running = true;
    struct stop_running {
        lease_state& s;
        ~stop_running() { s.running = false; }
    } guard{*state};
    const lease_time time(*state);
    for (;;) {
        for (const auto& s : state->fsm.resume(in, time))
            run(state, s);
        if (state->deferred.empty()) return;
        in = std::move(state->deferred.front());
        state->deferred.erase(state->deferred.begin());
    }
}

bool leave_lease(const std::shared_ptr<lease_state>& state, lease_event event) noexcept {
    if (!state->fsm.leave(event).end) return false;
    try {
        asio::post(state->client->strand(),
                   [state, event] { resume_lease(state, lease_input::ended_by(event)); });
    } catch (...) {
        // Out of memory: nothing is sent; the keys expire with their ttl, the watchdog stops at its
        // next tick when it finds the lease not held.
    }
    return true;
}

}  // namespace redlock::detail
