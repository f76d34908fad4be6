// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_TEST_FAULT_CHAOS_FAULT_SCHEDULE_HPP
#define REDLOCK_TEST_FAULT_CHAOS_FAULT_SCHEDULE_HPP

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <span>
#include <string>
#include <vector>

#include <sys/types.h>

namespace redlock::chaos {

/// What every deployment's faults share: the draws from the seed, the heals due later, the
/// count and log of what was injected, and the pauses of worker processes (SIGSTOP past the
/// longest ttl: the GC-pause scenario). A deployment adds its own faults in inject().
/// Not thread-safe: one thread drives it.
class fault_schedule {
public:
    using clock = std::chrono::steady_clock;
    /// Replaces the worker process in `slot` by a fresh one (a new client process, as a worker
    /// restarted by its supervisor or an autoscaler starts) and returns its PID.
    using respawn_function = std::function<pid_t(std::size_t slot)>;

    fault_schedule(std::uint64_t seed, std::vector<pid_t> workers);
    virtual ~fault_schedule() = default;
    fault_schedule(const fault_schedule&) = delete;
    fault_schedule& operator=(const fault_schedule&) = delete;

    /// Injects one new fault, drawn from the seed.
    virtual void inject() = 0;
    /// Heals the faults whose time has come.
    void heal_due();
    /// Heals everything now (restarts what is down, resumes what is paused).
    virtual void heal_all();
    /// How long to wait before the next fault (a draw from the seed).
    [[nodiscard]] std::chrono::milliseconds next_gap();
    /// Looks at the deployment between faults (called every few milliseconds): what the
    /// servers did by themselves, such as a promotion.
    virtual void observe() {}
    /// How worker_restart() starts a fresh worker; without one, workers are never restarted.
    void set_respawn(respawn_function respawn) { respawn_ = std::move(respawn); }

    [[nodiscard]] const std::map<std::string, std::uint64_t>& injected() const noexcept { return injected_; }
    /// Every fault and heal as a JSON line {"at": steady ns, "fault": kind, "target": ...}.
    [[nodiscard]] const std::vector<std::string>& log() const noexcept { return log_; }
    /// When a server last came back from a restart, or the deployment from a failover: the
    /// clients' quarantine of it ends max_ttl later.
    [[nodiscard]] clock::time_point last_restart() const noexcept { return last_restart_; }

protected:
    [[nodiscard]] int uniform(int lo, int hi);       // inclusive
    [[nodiscard]] std::size_t below(std::size_t n);  // in [0, n), n > 0
    void later(std::chrono::milliseconds after, std::function<void()> heal);
    // Counts a fault and logs it with its target ("node 3", "worker 1 -> node 2").
    void count(const std::string& kind, const std::string& target);
    void note(const std::string& event, const std::string& target);
    void restarted() { last_restart_ = clock::now(); }
    [[nodiscard]] std::size_t worker_slots() const noexcept { return workers_.size(); }
    // Pauses a worker for 0.9 to 1.8 s, or for `at_least` to `at_least` + 1 s when given.
    // False: every worker but one is paused already (one always runs).
    bool worker_pause(std::chrono::milliseconds at_least = {});
    // Pauses workers until one is left running.
    void pause_all_workers_but_one(std::chrono::milliseconds at_least = {});
    // Kills a worker that is not paused (kill -9: it ends no scope and releases nothing) and
    // starts a fresh client process in its place. False: no respawn function, or none to kill.
    bool worker_restart();
    // The faults the verdict rests on (essential_faults), each in every schedule at a set point:
    // counts this injection, and when the next essential fault is due (the `at`-th injection
    // or later, if it could not be done then) tries it. True: this injection was that try.
    [[nodiscard]] bool inject_essential_when_due(std::span<const std::uint64_t> at);
    // Essential fault number `which`; false: it cannot be done now.
    [[nodiscard]] virtual bool inject_essential(std::size_t which) = 0;

    std::mt19937_64 rng_;

private:
    struct pending_heal {
        clock::time_point at;
        std::function<void()> heal;
    };

    std::vector<pid_t> workers_;
    respawn_function respawn_;
    std::vector<pending_heal> pending_;
    std::set<std::size_t> workers_paused_;
    std::map<std::string, std::uint64_t> injected_;
    std::vector<std::string> log_;
    clock::time_point last_restart_{};
    std::uint64_t injections_ = 0;
    std::size_t essentials_done_ = 0;
};

}  // namespace redlock::chaos

#endif
