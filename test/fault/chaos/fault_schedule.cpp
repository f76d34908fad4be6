// SPDX-License-Identifier: BSL-1.0
#include "fault/chaos/fault_schedule.hpp"

#include "fault/chaos/history.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <csignal>

namespace redlock::chaos {

using std::chrono::milliseconds;

namespace {
// Longer than the workers' longest ttl (800 ms): a paused worker wakes up with a lease that ran
// out while it slept, the GC-pause scenario.
constexpr int worker_pause_min_ms = 900;
constexpr int worker_pause_max_ms = 1800;
}  // namespace

fault_schedule::fault_schedule(std::uint64_t seed, std::vector<pid_t> workers)
    : rng_(seed), workers_(std::move(workers)) {}

int fault_schedule::uniform(int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng_);
}

std::size_t fault_schedule::below(std::size_t n) {
    return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_);
}

void fault_schedule::count(const std::string& kind, const std::string& target) {
    ++injected_[kind];
    note(kind, target);
}

void fault_schedule::note(const std::string& event, const std::string& target) {
    log_.push_back(nlohmann::json{{"at", now_ns()}, {"fault", event}, {"target", target}}.dump());
}

milliseconds fault_schedule::next_gap() {
    return milliseconds(uniform(100, 500));
}

void fault_schedule::later(milliseconds after, std::function<void()> heal) {
    pending_.push_back({clock::now() + after, std::move(heal)});
}

void fault_schedule::heal_due() {
    const auto now = clock::now();
    // A heal may schedule nothing new, but run them from a copy all the same.
    std::vector<pending_heal> due;
    auto split = std::stable_partition(pending_.begin(), pending_.end(),
                                       [&](const pending_heal& p) { return p.at > now; });
    std::move(split, pending_.end(), std::back_inserter(due));
    pending_.erase(split, pending_.end());
    for (auto& p : due)
        p.heal();
}

void fault_schedule::heal_all() {
    auto all = std::move(pending_);
    pending_.clear();
    for (auto& p : all)
        p.heal();
}

bool fault_schedule::inject_essential_when_due(std::span<const std::uint64_t> at) {
    ++injections_;
    if (essentials_done_ >= at.size() || injections_ < at[essentials_done_]) return false;
    if (inject_essential(essentials_done_)) ++essentials_done_;
    return true;
}

bool fault_schedule::worker_pause(milliseconds at_least) {
    std::vector<std::size_t> candidates;
    for (std::size_t w = 0; w < workers_.size(); ++w)
        if (!workers_paused_.contains(w)) candidates.push_back(w);
    // One worker always runs: the one that meets what a failover left while the others sleep.
    if (candidates.size() < 2) return false;
    const auto w = candidates[below(candidates.size())];
    count("worker_pause", "worker " + std::to_string(w));
    ::kill(workers_[w], SIGSTOP);
    workers_paused_.insert(w);
    const auto pause = at_least > at_least.zero()
                           ? at_least + milliseconds(uniform(0, 1000))
                           : milliseconds(uniform(worker_pause_min_ms, worker_pause_max_ms));
    later(pause, [this, w] {
        ::kill(workers_[w], SIGCONT);
        workers_paused_.erase(w);
        note("heal worker_pause", "worker " + std::to_string(w));
    });
    return true;
}

void fault_schedule::pause_all_workers_but_one(milliseconds at_least) {
    while (worker_pause(at_least)) {
    }
}

bool fault_schedule::worker_restart() {
    if (!respawn_) return false;
    std::vector<std::size_t> candidates;
    for (std::size_t w = 0; w < workers_.size(); ++w)
        if (!workers_paused_.contains(w)) candidates.push_back(w);
    if (candidates.empty()) return false;
    const auto w = candidates[below(candidates.size())];
    workers_[w] = respawn_(w);
    count("worker_fresh_restart", "worker slot " + std::to_string(w));
    return true;
}

}  // namespace redlock::chaos
