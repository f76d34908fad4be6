// SPDX-License-Identifier: BSL-1.0
#include "lock/lease/lost_waiter.hpp"

#include "detail/completion.hpp"
#include "lock/client/cancel_on_slot.hpp"
#include "lock/lease/lease_runner.hpp"

#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>

#include <algorithm>

namespace redlock::detail {

namespace asio = boost::asio;
using boost::system::error_code;

lost_waiter::lost_waiter(const std::shared_ptr<lease_state>& state, lease_handler handler)
    : state_(state), client_(state->client), handler_(std::move(handler)) {}

void lost_waiter::connect_cancellation() {
    cancel_on_slot(handler_, shared_from_this(), client_->strand());
}

void lost_waiter::start(const std::shared_ptr<lease_state>& state) {
    if (done_) return;
    if (state->fsm.ended()) {
        complete(state->fsm.end_reason());
        return;
    }
    state->lost_waiters.push_back(shared_from_this());
    resume_lease(state, lease_input::waiting());
}

void lost_waiter::cancel() {
    if (done_) return;
    if (auto state = state_.lock()) {
        auto& waiters = state->lost_waiters;
        waiters.erase(std::remove(waiters.begin(), waiters.end(), shared_from_this()), waiters.end());
    }
    complete(asio::error::operation_aborted);
}

void lost_waiter::complete(error_code ec) {
    if (done_) return;
    done_ = true;
    complete_on_handler_executor(std::move(handler_), client_->executor(), ec);
}

void start_wait_lost(std::shared_ptr<lease_state> state, lease_handler handler) {
    auto strand = state->client->strand();
    auto waiter = std::make_shared<lost_waiter>(state, std::move(handler));
    waiter->connect_cancellation();
    // The lease stays alive until the wait is registered with it.
    asio::post(strand, [waiter, state = std::move(state)] { waiter->start(state); });
}

}  // namespace redlock::detail
