// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_LOCK_ACQUIRE_RETRY_SLEEP_HPP
#define REDLOCK_LOCK_ACQUIRE_RETRY_SLEEP_HPP

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/system/error_code.hpp>

#include <chrono>
#include <optional>
#include <utility>

namespace redlock::detail {

/// The sleep of an acquisition between two rounds: a timer that a release message, a hand-off
/// or a late split may end sooner. Each arming of the timer has a generation, so that the
/// handler of a sleep that was ended or moved does nothing: whatever ends a sleep, the rest of
/// the acquisition runs once. Strand only.
class retry_sleep {
public:
    using clock = std::chrono::steady_clock;

    explicit retry_sleep(const boost::asio::strand<boost::asio::any_io_executor>& strand) : strand_(strand) {}

    [[nodiscard]] bool sleeping() const noexcept { return sleeping_; }

    /// Sleeps for `delay`; `then` runs on the strand when the sleep ends by its timer. `then`
    /// keeps the sleep's owner (and so the sleep) alive.
    template <class Then>
    void sleep_for(clock::duration delay, Then then) {
        sleeping_ = true;
        // Made at the first sleep: most acquisitions never sleep, and a timer on a strand
        // costs an allocation.
        if (!timer_) timer_.emplace(strand_);
        timer_->expires_after(delay);
        arm(std::move(then));
    }

    /// Ends the sleep at `at` instead, if that is sooner; `then` as for sleep_for().
    template <class Then>
    void end_by(clock::time_point at, Then then) {
        if (!sleeping_ || at >= timer_->expiry()) return;
        timer_->expires_at(at);  // cancels the current wait: its handler is now stale
        arm(std::move(then));
    }

    /// Ends the sleep here; its timer's handler does nothing. The caller goes on itself.
    void end_now() {
        ++generation_;
        if (timer_) timer_->cancel();
        sleeping_ = false;
    }

private:
    template <class Then>
    void arm(Then then) {
        timer_->async_wait(
            [this, generation = ++generation_, then = std::move(then)](boost::system::error_code) mutable {
                if (generation != generation_) return;
                sleeping_ = false;
                then();
            });
    }

    boost::asio::strand<boost::asio::any_io_executor> strand_;
    std::optional<boost::asio::steady_timer> timer_;
    unsigned generation_ = 0;
    bool sleeping_ = false;
};

}  // namespace redlock::detail

#endif
