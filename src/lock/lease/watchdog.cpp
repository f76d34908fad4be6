// SPDX-License-Identifier: BSL-1.0
#include "lock/lease/watchdog.hpp"

#include "lock/lease/lease_end.hpp"
#include "lock/lease/lease_ops.hpp"
#include <redlock/error.hpp>

#include <boost/asio/bind_executor.hpp>

namespace redlock::detail {

namespace asio = boost::asio;
using boost::system::error_code;

watchdog::watchdog(std::shared_ptr<lease_state> state, watchdog_schedule schedule)
    : state_(state), client_(state->client), schedule_(schedule), tick_(client_->strand()) {}

watchdog::~watchdog() {
    stop();
}

void watchdog::start() {
    auto state = state_.lock();
    if (!state) return;
    client_->metrics().watchdogs_running.fetch_add(1, std::memory_order_relaxed);
    started_ = true;
    watch_validity(state);
    schedule(schedule_.first_tick(clock::now()));
}

void watchdog::stop() {
    if (started_ && !stopped_) client_->metrics().watchdogs_running.fetch_sub(1, std::memory_order_relaxed);
    stopped_ = true;
    tick_.cancel();
}

void watchdog::schedule(clock::time_point at) {
    tick_.expires_at(at);
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
    if (schedule_.on_tick(clock::now()) == watchdog_schedule::tick::give_up) {
        give_up(state, lease_event::max_hold_reached);
        return;
    }
    start_extend(state, schedule_.ttl(), nullptr,
                 asio::bind_executor(client_->strand(),
                                     [self = shared_from_this()](error_code ec) { self->on_renewed(ec); }));
}

void watchdog::on_renewed(error_code ec) {
    if (stopped_) return;
    if (!ec) client_->metrics().watchdog_renewals.fetch_add(1, std::memory_order_relaxed);
    // None: the extend ended the lease, which stops us.
    if (const auto next = schedule_.after_extend(ec, clock::now())) schedule(*next);
}

}  // namespace redlock::detail
