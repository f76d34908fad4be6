// SPDX-License-Identifier: BSL-1.0
#include "lock/acquire/wait_policy.hpp"

#include "lock/acquire/quorum.hpp"
#include "lock/acquire/retry_delay.hpp"
#include <redlock/error.hpp>

#include <algorithm>

namespace redlock::detail {

using std::chrono::milliseconds;

bool wait_policy::subscription_refused() noexcept {
    if (!notify_) return false;
    notify_ = false;
    return true;
}

void wait_policy::round_started() noexcept {
    // A round counts as split once a late grant says so (after_late_split): only now is it known.
    if (!last_round_split_) splits_in_a_row_ = 0;
    holder_pttl_ = milliseconds::zero();
    woken_early_ = false;
    queue_head_ = false;
}

void wait_policy::holder_pttl(std::int64_t pttl) noexcept {
    if (pttl == -1) return;
    const milliseconds left(std::max<std::int64_t>(pttl, 1));
    if (holder_pttl_ == milliseconds::zero() || left < holder_pttl_) holder_pttl_ = left;
}

wait_policy::plan wait_policy::after_failed_round(boost::system::error_code cause, bool split, bool ticketed,
                                                  milliseconds time_left, std::mt19937_64& rng) {
    last_round_split_ = split;
    waiting_for_message_ = false;
    plan next;
    const auto backoff = retry_delay(retry_, time_left, rng);
    next.delay = backoff;
    const bool contended = cause == error::not_acquired;
    // A fair waiter is woken alone on its own channel: a split there is no herd to spread.
    const bool spread = split && !queued_;
    if (queued_) {
        next.delay = queue_wait(backoff, time_left, cause, ticketed, next.listen);
    } else if (notify_ && contended && spread) {
        next.delay = after_split(time_left, rng);
        next.listen = channel::released;
    } else if (notify_ && contended) {
        next.delay = notify_wait(time_left);
        next.listen = channel::released;
        waiting_for_message_ = true;
    }
    // Woken while the round was on its way, which may have been refused before the release.
    if (woken_early_ && notify_ && contended && !spread) {
        next.delay = clock::duration::zero();
        waiting_for_message_ = false;
    }
    return next;
}

wait_policy::wake_up wait_policy::after_release() const noexcept {
    if (nodes_ == 1 || queued_ || !last_round_split_) return {};
    return {false, split_spread()};
}

std::optional<wait_policy::plan> wait_policy::after_late_split(milliseconds time_left, std::mt19937_64& rng) {
    if (!waiting_for_message_) return std::nullopt;
    last_round_split_ = true;
    waiting_for_message_ = false;
    if (time_left <= milliseconds::zero()) return std::nullopt;
    return plan{after_split(time_left, rng), channel::released};
}

wait_policy::clock::duration wait_policy::split_spread() const noexcept {
    return std::clamp<clock::duration>(2 * last_round_, std::chrono::microseconds(100),
                                       std::chrono::milliseconds(2));
}

// A release message still wakes us sooner, and the wait ends when the denying holder's key
// would expire, as after a round that was not split.
wait_policy::clock::duration wait_policy::after_split(milliseconds time_left, std::mt19937_64& rng) {
    const auto step = split_spread() * (std::int64_t{1} << std::min(splits_in_a_row_++, 16u));
    std::uniform_int_distribution<clock::rep> pick(step.count() / 2, step.count());
    const clock::duration delay{pick(rng)};
    auto cap = std::min(retry_.max_delay, time_left);
    if (holder_pttl_ > milliseconds::zero()) cap = std::min(cap, holder_pttl_);
    return std::min(delay, clock::duration(cap));
}

// Waits for a release message, capped by the holder's PTTL, a backoff that doubles per wait
// (so a lost message costs little at first), and the time left.
milliseconds wait_policy::notify_wait(milliseconds time_left) noexcept {
    auto cap = retry_.max_delay * (1 << std::min(notify_waits_++, 3u));
    if (holder_pttl_ > milliseconds::zero()) cap = std::min(cap, holder_pttl_);
    return std::max(milliseconds(1), std::min(cap, time_left));
}

// A fair waiter is woken on its own channel when its turn comes, and otherwise tries again
// (which refreshes its place) every third of queue_timeout; at the head of the queue also
// when the holder's lease would expire. A round that could not queue us yet (no ticket) is
// followed at once by one that does.
milliseconds wait_policy::queue_wait(milliseconds backoff, milliseconds time_left,
                                     boost::system::error_code cause, bool ticketed,
                                     channel& listen) const noexcept {
    if (!queued_this_round_) return ticketed ? milliseconds::zero() : backoff;
    auto cap = std::max(milliseconds(1), queue_timeout_ / 3);
    if (queue_head_ && holder_pttl_ > milliseconds::zero()) cap = std::min(cap, holder_pttl_);
    if (cause != error::not_acquired || !notify_) {
        cap = std::min(cap, backoff);
    } else {
        listen = channel::wake;
    }
    return std::max(milliseconds(1), std::min(cap, time_left));
}

handoff_verdict judge_handoff(std::size_t handed, std::size_t quorum, milliseconds ttl,
                              milliseconds queue_timeout, std::chrono::steady_clock::duration since_round,
                              double drift_factor, milliseconds min_validity) noexcept {
    if (handed < quorum) return {};
    const auto term = std::min(ttl, queue_timeout);
    const auto left = validity_left(term, since_round, drift_factor);
    if (left <= min_validity) return {handoff_verdict::action::try_round};
    return {handoff_verdict::action::take, left, left < ttl - ttl / 3};
}

}  // namespace redlock::detail
