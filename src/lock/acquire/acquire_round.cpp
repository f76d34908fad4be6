// SPDX-License-Identifier: BSL-1.0
#include "lock/acquire/acquire_round.hpp"

#include <redlock/error.hpp>

#include <algorithm>

namespace redlock::detail {

using boost::system::error_code;

void acquire_round::begin(std::string token, clock::time_point t0) {
    // The tokens of the latest few rounds: a lock still holding one is ours to take over.
    constexpr std::size_t kept = 8;
    if (!token_.empty()) {
        if (earlier_tokens_.size() == kept) earlier_tokens_.erase(earlier_tokens_.begin());
        earlier_tokens_.push_back(std::move(token_));
    }
    token_ = std::move(token);
    ++number_;
    t0_ = t0;
    tally_ = vote_tally(nodes_);
    answered_.assign(nodes_, false);
    granted_.assign(nodes_, false);
    handed_over_.assign(nodes_, false);
    denied_.assign(nodes_, false);
    if (fenced_) fence_.reset(nodes_, resources_);
    contended_ = false;
    awaiting_holds_ = false;
    round_heard_ = 0;
    round_ticket_max_ = 0;
}

std::string_view acquire_round::previous_token() const noexcept {
    return earlier_tokens_.empty() ? std::string_view() : std::string_view(earlier_tokens_.back());
}

bool acquire_round::is_earlier_token(std::string_view token) const {
    return std::find(earlier_tokens_.begin(), earlier_tokens_.end(), token) != earlier_tokens_.end();
}

void acquire_round::answered(std::size_t node, bool granted) {
    answered_[node] = true;
    granted_[node] = granted;
}

void acquire_round::granted(std::size_t node, std::span<const std::int64_t> fences, bool numbered) {
    granted_[node] = true;
    if (!fences.empty() && fenced_) fence_.record(node, fences, numbered);
}

acquire_round::step acquire_round::count(std::size_t node, vote v, std::uint64_t outer_fence) {
    // A grant that did not count (quarantine, too few replicas) takes no part in the fence.
    if (v != vote::granted && node < granted_.size()) granted_[node] = false;
    if (v == vote::denied && node < denied_.size()) denied_[node] = true;
    const bool was_decided = tally_.decided();
    tally_.add(v);
    if (!was_decided) return tally_.decided() ? decide(outer_fence) : step{};
    if (awaiting_stragglers_ && tally_.all_answered())
        return {step::action::give_up, final_cause_, {}, false};
    if (awaiting_holds_ && !hold_undecided()) {
        awaiting_holds_ = false;
        return settle_fence(outer_fence);
    }
    return {};
}

acquire_round::step acquire_round::decide(std::uint64_t outer_fence) {
    step s;
    switch (tally_.state()) {
        case round_state::won:
            if (fenced_ && hold_undecided() && outer_fence == 0) {
                awaiting_holds_ = true;  // count() settles once the rest have answered
            } else if (fenced_) {
                s = settle_fence(outer_fence);
            } else {
                s.what = step::action::grant;
            }
            break;
        case round_state::denied:
            s = {step::action::fail, error::not_acquired, {}, false};
            break;
        case round_state::unreachable:
            s = {step::action::fail, error::quorum_unreachable, {}, false};
            break;
        case round_state::pending:
            break;
    }
    s.decided = true;
    return s;
}

acquire_round::step acquire_round::settle_fence(std::uint64_t outer_fence) {
    step s;
    s.write_back = fence_.settle({granted_.data(), granted_.size()}, outer_fence, tally_.quorum());
    if (!fence_.writing_back()) s.what = step::action::grant;
    return s;
}

acquire_round::step acquire_round::on_writeback(bool raised) {
    switch (fence_.on_writeback(raised, tally_.quorum())) {
        case fence_settlement::writeback::confirmed:
            return {step::action::grant, {}, {}, false};
        case fence_settlement::writeback::short_of_quorum:
            return {step::action::fail, error::quorum_unreachable, {}, false};
        case fence_settlement::writeback::pending:
            break;
    }
    return {};
}

std::vector<bool> acquire_round::nodes_to_release() const {
    std::vector<bool> nodes(nodes_, true);
    for (std::size_t i = 0; i < nodes_; ++i)
        nodes[i] = !denied_[i];
    return nodes;
}

bool acquire_round::late_grant_behind(std::span<const std::int64_t> node_fences) const noexcept {
    return fenced_ && (succeeded_ || fence_.writing_back()) && fence_.behind(node_fences);
}

void acquire_round::await_stragglers(boost::system::error_code cause) noexcept {
    awaiting_stragglers_ = true;
    final_cause_ = cause;
}

bool acquire_round::hold_undecided() const {
    const auto existing = fence_.existing_holds({granted_.data(), granted_.size()});
    return existing > 0 && existing < tally_.quorum() && !tally_.all_answered();
}

std::optional<acquire_round::clock::duration> acquire_round::validity(
    clock::time_point now, std::chrono::milliseconds ttl, double drift_factor,
    std::chrono::milliseconds min_validity) const noexcept {
    const auto left = validity_left(ttl, now - t0_, drift_factor);
    if (left > min_validity) return left;
    return std::nullopt;
}

bool acquire_round::note_ticket(std::int64_t ticket, bool wait) {
    ++round_heard_;
    if (ticket > 0) round_ticket_max_ = std::max(round_ticket_max_, static_cast<std::uint64_t>(ticket));
    if (ticket_ != 0 || !wait || round_heard_ < tally_.quorum()) return false;
    ticket_ = round_ticket_max_;
    return true;
}

std::size_t acquire_round::hand_over(std::size_t node) {
    if (node >= handed_over_.size() || handed_over_[node]) return 0;
    handed_over_[node] = true;
    return static_cast<std::size_t>(std::count(handed_over_.begin(), handed_over_.end(), true));
}

void acquire_round::take_handoff(std::string_view place) {
    token_ = std::string(place) + ':' + token_;  // the value fair.lua gave the lock
    granted_ = handed_over_;
    answered_.assign(nodes_, true);
}

std::vector<bool> acquire_round::refused() const {
    std::vector<bool> refused(nodes_, false);
    for (std::size_t i = 0; i < nodes_; ++i)
        refused[i] = !granted_[i] && answered_[i];
    return refused;
}

error_code acquisition_error(error_code cause, const vote_tally& tally, error_code unreachable, bool waited,
                             bool replication_short) {
    if (cause == error::not_acquired && tally.failed() > tally.nodes() - tally.quorum()) {
        cause = error::quorum_unreachable;
    }
    if (cause == error::quorum_unreachable) cause = unreachable;
    if (cause == error::not_acquired && waited) cause = error::wait_timeout;
    if (cause == error::quorum_unreachable && replication_short) cause = error::not_replicated;
    return cause;
}

std::string describe_acquisition_error(error_code ec) {
    if (ec == error::not_acquired) return "held by another owner";
    if (ec == error::wait_timeout) return "still held by another owner when the wait ran out";
    if (ec == error::quorum_unreachable) return "too many nodes failed or timed out";
    if (ec == error::server_error) return "too many nodes refused the command";
    if (ec == error::validity_expired) return "the quorum came after the validity ran out";
    if (ec == error::not_replicated) return "too few replicas acknowledged the grant";
    if (ec == error::permits_mismatch) return "the semaphore's permits are in use under another count";
    if (ec == error::upgrade_refused) return "the owner holds it for reading and asked to write";
    return ec.message();
}

}  // namespace redlock::detail
