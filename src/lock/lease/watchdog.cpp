// SPDX-License-Identifier: BSL-1.0
#include "lock/lease/watchdog.hpp"

#include "lock/lease/lease_end.hpp"
#include "lock/lease/lease_ops.hpp"
#include <redlock/error.hpp>

#include <boost/asio/bind_executor.hpp>

#include <algorithm>

namespace redlock::detail {

namespace asio = boost::asio;
using boost::system::error_code;
using std::chrono::milliseconds;

watchdog::watchdog(std::shared_ptr<lease_state> state, milliseconds ttl, milliseconds every,
                   clock::time_point hold_until)
    : state_(state),
      client_(state->client),
      ttl_(ttl),
      every_(every),
      hold_until_(hold_until),
      tick_(client_->strand()) {}

watchdog::~watchdog() {
    stop();
}

void watchdog::start() {
    auto state = state_.lock();
    if (!state) return;
    client_->metrics().watchdogs_running.fetch_add(1, std::memory_order_relaxed);
    started_ = true;
    watch_validity(state);
    schedule(clock::now() + every_);
}

void watchdog::stop() {
    if (started_ && !stopped_) client_->metrics().watchdogs_running.fetch_sub(1, std::memory_order_relaxed);
    stopped_ = true;
    tick_.cancel();
}

void watchdog::schedule(clock::time_point at) {
    tick_.expires_at(std::min(at, hold_until_));
    tick_.async_wait([self = shared_from_this()](error_code ec) {
        if (!ec && !self->stopped_) self->renew();
    });
}

void watchdog::renew() {
    auto state = state_.lock();
    if (!state) {
        stop();
        return;
    }
    if (clock::now() >= hold_until_) {
        // max_hold: we stop keeping it, and free it now rather than let it run out.
        give_up(state, lease_event::max_hold_reached);
        return;
    }
    start_extend(state, ttl_, nullptr,
                 asio::bind_executor(client_->strand(),
                                     [self = shared_from_this()](error_code ec) { self->on_renewed(ec); }));
}

void watchdog::on_renewed(error_code ec) {
    if (stopped_) return;
    if (!ec) {
        client_->metrics().watchdog_renewals.fetch_add(1, std::memory_order_relaxed);
        schedule(clock::now() + every_);
        return;
    }
    // not_owner, lock_lost, handed_over: the extend ended the lease, which stops us.
    if (ec == error::not_owner || ec == error::lock_lost || ec == error::handed_over) return;
    // Too few nodes answered: try again soon. If none succeeds in time, the deadline ends it.
    auto state = state_.lock();
    if (!state) {
        stop();
        return;
    }
    const auto retry = std::clamp(state->node_timeout, milliseconds(5), every_);
    schedule(clock::now() + retry);
}

}  // namespace redlock::detail
