// SPDX-License-Identifier: BSL-1.0
#include "lock/kinds/handover_record.hpp"
#include "lock/lease/lease_ops.hpp"
#include "lock/lease/lease_runner.hpp"
#include "lock/lease/lease_state.hpp"
#include "lock/lease/lost_waiter.hpp"
#include <redlock/error.hpp>
#include <redlock/lease.hpp>

#include <boost/asio/post.hpp>
#include <boost/asio/system_executor.hpp>

#include <algorithm>

namespace redlock {

namespace {

const std::string empty_string;

// Releases a lease nobody will release any more; never throws (destructors call it).
void drop(const std::shared_ptr<detail::lease_state>& state) noexcept {
    if (state && detail::leave_lease(state, detail::lease_event::dropped)) {
        state->client->metrics().leases_dropped.fetch_add(1, std::memory_order_relaxed);
    }
}

}  // namespace

lease::lease() noexcept = default;
lease::lease(std::shared_ptr<detail::lease_state> state) noexcept : state_(std::move(state)) {}
lease::lease(lease&& other) noexcept = default;

lease& lease::operator=(lease&& other) noexcept {
    if (this != &other) {
        drop(state_);
        state_ = std::move(other.state_);
    }
    return *this;
}

lease::~lease() {
    drop(state_);
}

bool lease::held() const noexcept {
    return state_ && state_->held();
}
const std::string& lease::resource() const noexcept {
    return state_ ? state_->resource : empty_string;
}
std::vector<std::string> lease::resources() const {
    if (!state_) return {};
    const auto several = state_->kind->resources();
    if (several.empty()) return {state_->resource};
    return {several.begin(), several.end()};
}
std::vector<std::uint64_t> lease::fences() const {
    if (!state_) return {};
    if (!state_->fences.empty()) return state_->fences;
    return std::vector<std::uint64_t>(std::max<std::size_t>(state_->kind->resources().size(), 1),
                                      state_->fence);
}
const std::string& lease::token() const noexcept {
    return state_ ? state_->token : empty_string;
}
std::uint64_t lease::fence() const noexcept {
    return state_ ? state_->fence : 0;
}

lease::clock::time_point lease::valid_until() const noexcept {
    return state_ ? state_->valid_until_time() : clock::time_point{};
}

lease::clock::duration lease::remaining() const noexcept {
    if (!state_) return clock::duration::zero();
    auto left = state_->valid_until_time() - clock::now();
    return left > clock::duration::zero() ? left : clock::duration::zero();
}

unsigned lease::nodes_granted() const noexcept {
    return state_ ? state_->fsm.nodes_granted() : 0u;
}

std::string lease::handover() const {
    if (!state_) return {};
    state_->fsm.mark_handover_written();
    return detail::handover_text(*state_);
}

void lease::async_extend_impl(std::chrono::milliseconds ttl, diagnostics* diag, void_handler h) {
    if (!state_) {
        if (diag) {
            diag->clear();
            diag->message = "extend: the lease is empty (default-constructed or moved from)";
        }
        detail::complete_refused(boost::asio::system_executor(), std::move(h), error::not_owner);
        return;
    }
    detail::start_extend(state_, ttl, diag, std::move(h));
}

void lease::async_check_impl(diagnostics* diag, void_handler h) {
    if (!state_) {
        if (diag) {
            diag->clear();
            diag->message = "check: the lease is empty (default-constructed or moved from)";
        }
        detail::complete_refused(boost::asio::system_executor(), std::move(h), error::not_owner);
        return;
    }
    detail::start_check(state_, diag, std::move(h));
}

void lease::async_wait_lost_impl(void_handler h) {
    if (!state_) {
        detail::complete_refused(boost::asio::system_executor(), std::move(h), error::not_owner);
        return;
    }
    detail::start_wait_lost(state_, std::move(h));
}

void lease::async_release_impl(diagnostics* diag, void_handler h) {
    if (!state_ || !state_->fsm.leave(detail::lease_event::release_called).end) {
        if (diag) {
            diag->clear();
            diag->message = state_ ? "release \"" + state_->resource + "\": the lease is no longer held"
                                   : "release: the lease is empty (default-constructed or moved from)";
        }
        auto ex = state_ ? state_->client->executor()
                         : boost::asio::any_io_executor(boost::asio::system_executor());
        detail::complete_refused(ex, std::move(h), error::not_owner);
        return;
    }
    detail::start_release(state_, diag, std::move(h));
}

}  // namespace redlock
