#include "lock/watchdog.hpp"

#include "lock/lease_end.hpp"
#include "lock/lease_ops.hpp"
#include <redlock/error.hpp>

#include <boost/asio/bind_executor.hpp>

#include <algorithm>

namespace redlock::detail {

namespace asio = boost::asio;
using boost::system::error_code;
using std::chrono::milliseconds;

watchdog::watchdog(std::shared_ptr<lease_state> state, milliseconds ttl, milliseconds every,
                   clock::time_point hold_until)
    : state_(std::move(state)),
      ttl_(ttl),
      every_(every),
      hold_until_(hold_until),
      tick_(state_->client->strand()) {}

void watchdog::start() {
    state_->client->metrics().watchdogs_running.fetch_add(1, std::memory_order_relaxed);
    started_ = true;
    watch_validity(state_);
    schedule(clock::now() + every_);
}

void watchdog::stop() {
    if (started_ && !stopped_)
        state_->client->metrics().watchdogs_running.fetch_sub(1, std::memory_order_relaxed);
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
    if (clock::now() >= hold_until_) {
        // max_hold: we stop keeping it, and free it now rather than let it run out.
        give_up(state_, error::lock_lost);
        return;
    }
    start_extend(state_, ttl_, nullptr,
                 asio::bind_executor(state_->client->strand(),
                                     [self = shared_from_this()](error_code ec) { self->on_renewed(ec); }));
}

void watchdog::on_renewed(error_code ec) {
    if (stopped_) return;
    if (!ec) {
        state_->client->metrics().watchdog_renewals.fetch_add(1, std::memory_order_relaxed);
        schedule(clock::now() + every_);
        return;
    }
    // not_owner and lock_lost: the extend gave the lease up, which ends it and stops us.
    if (ec == error::not_owner || ec == error::lock_lost) return;
    // Too few nodes answered: try again soon. If none succeeds in time, the deadline ends it.
    const auto retry = std::clamp(state_->node_timeout, milliseconds(5), every_);
    schedule(clock::now() + retry);
}

}  // namespace redlock::detail
