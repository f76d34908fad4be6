// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_LOCK_LEASE_LEASE_FSM_HPP
#define REDLOCK_LOCK_LEASE_LEASE_FSM_HPP

#include "lock/acquire/quorum.hpp"
#include "lock/lease/lease_lifecycle.hpp"
#include "lock/lease/watchdog_schedule.hpp"

#include <boost/container/small_vector.hpp>
#include <boost/system/error_code.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace redlock::detail {

/// What happens to a lease, as its machine hears it (lease_fsm::resume). Timers and extends are
/// numbered: a timer armed before the latest arming, or an extend the machine no longer waits
/// for, is stale and does nothing.
struct lease_input {
    enum class type : std::uint8_t {
        start,             ///< granted: start the watchdog (when `schedule`), extend at once (when `ttl` > 0)
        tick,              ///< the watchdog's timer `id` fired
        validity_due,      ///< the validity timer `id` fired
        extend_requested,  ///< lease::async_extend `id` to `ttl`
        extend_decided,    ///< extend `id`'s round came to `outcome`, `granted` nodes, failing by `cause`
        extend_abandoned,  ///< extend `id`'s caller cancelled it: its outcome no longer counts
        ended,             ///< `event` moved the lease out of held, on any thread (lease_fsm::leave)
        wait_lost,         ///< an async_wait_lost began: the validity needs watching
    };
    type what = type::start;
    std::uint64_t id = 0;
    std::chrono::milliseconds ttl{0};
    round_state outcome = round_state::pending;
    unsigned granted = 0;
    boost::system::error_code cause;
    lease_event event = lease_event::release_called;
    std::optional<watchdog_schedule> schedule;

    [[nodiscard]] static lease_input started(std::optional<watchdog_schedule> schedule,
                                             std::chrono::milliseconds extend_now_to);
    [[nodiscard]] static lease_input fired(type timer, std::uint64_t id);
    [[nodiscard]] static lease_input extend(std::uint64_t id, std::chrono::milliseconds ttl);
    [[nodiscard]] static lease_input decided(std::uint64_t id, round_state outcome, unsigned granted,
                                             boost::system::error_code cause);
    [[nodiscard]] static lease_input abandoned(std::uint64_t id);
    [[nodiscard]] static lease_input ended_by(lease_event event);
    [[nodiscard]] static lease_input waiting();
};

/// What a lease's executor counts (client metrics), told by the machine.
enum class lease_count : std::uint8_t { extended, extend_failed, watchdog_renewal, watchdog_started };

/// One thing the executor does, in order.
struct lease_step {
    enum class type : std::uint8_t {
        send_extend,    ///< extend `id`'s round to `ttl` on every node; its outcome comes back as
                        ///< extend_decided
        send_release,   ///< the token-checked release on every node: `answered` by the release's caller,
                        ///< else in the background (nobody waits for its answers)
        arm_tick,       ///< the watchdog's timer, `id`, for `at`
        arm_validity,   ///< the validity timer, `id`, for `at`
        count,          ///< add one to `counted`
        extend_failed,  ///< tell the event listeners: `ec`, `text`
        finish_extend,  ///< complete extend `id` (the caller's, if any) with `ec` and `text`
        end,  ///< the lease ended with `ec` (`text`: why): stop its timers, tell its waiters and listeners
    };
    type what = type::count;
    std::uint64_t id = 0;
    std::chrono::milliseconds ttl{0};
    std::chrono::steady_clock::time_point at{};
    boost::system::error_code ec;
    std::string_view text;  ///< a static text, or the fsm's own until the next resume
    bool answered = false;
    bool watchdog_ran = false;  ///< end: a watchdog ran, so it stops now
    lease_count counted = lease_count::extended;
};

/// Where a lease's machine reads the time, and only when an input needs it (a release or a drop
/// does not): the steady clock, and how long the machine has been suspended in all
/// (suspended_so_far()).
class lease_clock {
public:
    virtual ~lease_clock() = default;
    [[nodiscard]] virtual std::chrono::steady_clock::time_point now() const noexcept = 0;
    [[nodiscard]] virtual std::chrono::nanoseconds suspended() const noexcept = 0;
};

/// The decisions of one lease, without its timers, its rounds or its clock: the I/O-free half of
/// a lease, which lease_runner.hpp carries out. It holds the phase (lease_lifecycle.hpp), the
/// validity, the watchdog's schedule and the extends in flight, and ends the lease in one place.
/// leave() and the observers are safe on any thread; resume() runs on the client's strand.
class lease_fsm {
public:
    using clock = std::chrono::steady_clock;
    using steps = boost::container::small_vector<lease_step, 4>;

    explicit lease_fsm(double drift_factor = 0.01) noexcept : drift_factor_(drift_factor) {}
    lease_fsm(const lease_fsm&) = delete;
    lease_fsm& operator=(const lease_fsm&) = delete;

    /// What `in` asks for, at the time `time` tells. The steps are valid until the next resume.
    const steps& resume(const lease_input& in, const lease_clock& time);

    /// Moves the phase out of held by `event`, on any thread; of two events racing to end a held
    /// lease, one gets the actions, the other none. Whoever moved it then resumes with ended_by.
    lease_actions leave(lease_event event) noexcept;

    /// A fresh number for an extend the executor starts (extend_requested); on any thread.
    [[nodiscard]] std::uint64_t next_extend_id() noexcept {
        return extends_made_.fetch_add(1, std::memory_order_relaxed) + 1;
    }

    // --- observers, on any thread ------------------------------------------------------------------
    [[nodiscard]] lease_phase phase() const noexcept { return phase_.load(std::memory_order_acquire); }
    [[nodiscard]] bool held() const noexcept { return phase() == lease_phase::held; }
    /// valid_until, less any time the machine was suspended since the round that gave it started
    /// (`suspended_now`: suspended_so_far()): the steady clock stops in a suspension, the ttls on
    /// the servers do not.
    [[nodiscard]] clock::time_point valid_until(std::chrono::nanoseconds suspended_now) const noexcept;
    /// Sets the validity to `t`, counted from a round that started when suspended_so_far() read
    /// `suspended_at_start`. The two stores are not one: a reader between them pairs a new validity
    /// with the old reading, which differ only by a suspension in that instant.
    void set_valid_until(clock::time_point t, std::chrono::nanoseconds suspended_at_start) noexcept;
    [[nodiscard]] unsigned nodes_granted() const noexcept {
        return nodes_granted_.load(std::memory_order_relaxed);
    }
    void set_nodes_granted(unsigned n) noexcept { nodes_granted_.store(n, std::memory_order_relaxed); }
    /// lease::handover(): a majority found without our token is then the adopter's, not a loss.
    void mark_handover_written() noexcept { handover_written_.store(true, std::memory_order_release); }
    [[nodiscard]] bool handover_written() const noexcept {
        return handover_written_.load(std::memory_order_acquire);
    }

    // --- on the strand -----------------------------------------------------------------------------
    [[nodiscard]] bool ended() const noexcept { return ended_; }
    [[nodiscard]] boost::system::error_code end_reason() const noexcept { return end_reason_; }
    /// Started and not stopped yet (the executor counts the watchdogs running).
    [[nodiscard]] bool watchdog_running() const noexcept { return schedule_.has_value() && !ended_; }

private:
    struct open_extend {
        std::uint64_t id = 0;
        std::chrono::milliseconds ttl{0};
        clock::time_point started{};
        clock::time_point valid_until_before{};
        std::chrono::nanoseconds suspended_at_start{0};
        bool by_watchdog = false;
    };

    void begin_extend(std::uint64_t id, std::chrono::milliseconds ttl, bool by_watchdog);
    void on_decided(const lease_input& in);
    void after_watchdog_extend(boost::system::error_code ec);
    void give_up(lease_event event);
    void lose(const open_extend& x, lease_event event, boost::system::error_code ec, std::string_view why);
    void end(lease_event event);
    void finish(const open_extend& x, boost::system::error_code ec, std::string_view text);
    void arm(lease_step::type timer, clock::time_point at);
    void count(lease_count what);
    lease_step& push(lease_step::type what);
    [[nodiscard]] clock::time_point at();
    [[nodiscard]] std::chrono::nanoseconds slept();

    double drift_factor_;
    std::atomic<lease_phase> phase_{lease_phase::held};
    std::atomic<clock::rep> valid_until_{0};
    std::atomic<std::chrono::nanoseconds::rep> suspended_before_{0};
    std::atomic<unsigned> nodes_granted_{0};
    std::atomic<bool> handover_written_{false};
    std::atomic<std::uint64_t> extends_made_{0};

    // On the strand only.
    std::optional<watchdog_schedule> schedule_;
    boost::container::small_vector<open_extend, 1> open_;  // rarely more than one
    std::uint64_t ticks_armed_ = 0;
    std::uint64_t validity_armed_ = 0;
    bool ended_ = false;
    boost::system::error_code end_reason_;
    // The time of this resume, read from time_ at the first need (at(), slept()).
    const lease_clock* time_ = nullptr;
    std::optional<clock::time_point> now_;
    std::optional<std::chrono::nanoseconds> suspended_;
    std::string text_;  // the one text of out_ made up here
    steps out_;
};

}  // namespace redlock::detail

#endif
