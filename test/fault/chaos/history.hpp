// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_TEST_FAULT_CHAOS_HISTORY_HPP
#define REDLOCK_TEST_FAULT_CHAOS_HISTORY_HPP

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace redlock::chaos {

/// Times are nanoseconds of std::chrono::steady_clock, which on Linux is CLOCK_MONOTONIC: one
/// clock for every process on the machine, so the workers' records can be compared.
using nanos = std::int64_t;

[[nodiscard]] nanos to_ns(std::chrono::steady_clock::time_point t) noexcept;
[[nodiscard]] nanos now_ns() noexcept;

/// One critical section: from the acquire's completion to the end of the scope. While the scope
/// ran, the lease was valid until valid_until (the watchdog moves it on): the hold counts as
/// [acquired, min(ended, valid_until)].
struct hold_record {
    int worker = 0;
    int coroutine = 0;
    std::string resource;
    std::string kind;  ///< plain, fenced, reentrant, fair, read, write or semaphore
    std::string token;
    std::uint64_t fence = 0;   ///< 0 for unfenced kinds
    nanos invoked = 0;         ///< the acquire was called
    nanos acquired = 0;        ///< the acquire completed with a lease
    nanos ended = 0;           ///< the scope's body finished (before the release)
    nanos valid_until = 0;     ///< the lease's validity when the body finished
    nanos granted_until = 0;   ///< the lease's validity when the body began (at `acquired`)
    std::uint64_t ttl_ms = 0;  ///< the acquire's ttl: a validity never lies further ahead
    /// The least validity the grant promises, counted from `invoked` (the ttl less the drift
    /// allowance: a round starts no earlier than the call); 0: none recorded.
    std::uint64_t promised_ms = 0;
    std::string outcome;  ///< "released", "lost", or the release's error
    /// The nodes (indices) that granted the acquire, "0,2,3"; for a Sentinel node, then the
    /// master its sentinels named last, "0 via 127.0.0.1:6379".
    std::string granted;
    /// How many nodes of its deployment must grant a hold: N / 2 + 1, counted by the worker from
    /// the deployment, not asked of the client; 0: not recorded.
    std::uint64_t quorum = 0;
    /// A semaphore's: how many of its holds may overlap (floor(K N / quorum), docs/safety.md).
    std::uint64_t holders_allowed = 1;
    /// An adopted hold (client::async_adopt): the token of the hold that handed it over, whose
    /// critical section ended as it wrote the hand-over out (its `ended`).
    std::string handed_from;
    /// What its fence belongs to, shared by holds that may share one: a reentrant owner's
    /// ("owner w<worker>c<coroutine>"), else the first hold's token ("token <token>"), which
    /// the holds adopted from it inherit. Empty: worked out from the history (history_checker).
    std::string lineage;
};

/// hold_record::lineage of a reentrant owner's holds, and of a hold that is not one (and of
/// those adopted from it).
[[nodiscard]] inline std::string owner_lineage(int worker, int coroutine) {
    return "owner w" + std::to_string(worker) + "c" + std::to_string(coroutine);
}
[[nodiscard]] inline std::string token_lineage(const std::string& token) {
    return "token " + token;
}

/// An acquire that completed without a lease (a fail in Jepsen's terms: it holds nothing).
struct failure_record {
    int worker = 0;
    std::string resource;
    std::string kind;
    nanos invoked = 0;
    nanos completed = 0;
    std::string error;
};

/// A write to the fenced store inside a hold.
struct write_record {
    int worker = 0;
    std::string resource;
    std::string token;
    std::uint64_t fence = 0;
    nanos invoked = 0;
    nanos completed = 0;
    nanos valid_until = 0;  ///< the lease's validity when the write was sent
    bool accepted = false;
};

/// A re-entry of a reentrant lock inside its outer hold: while the outer lease is valid, it must
/// get the outer fence.
struct reentry_record {
    int worker = 0;
    std::string resource;
    std::string token;
    std::uint64_t outer_fence = 0;
    std::uint64_t inner_fence = 0;
    nanos completed = 0;
    nanos outer_valid_until = 0;  ///< the outer lease's validity when the re-entry completed
    std::string error;            ///< non-empty if the re-entry failed
};

/// What a worker says about itself once every scope has ended.
struct worker_summary {
    int worker = 0;
    std::uint64_t scopes_started = 0;
    std::uint64_t scopes_ended = 0;
    std::uint64_t watchdogs_running = 0;  ///< must be 0: every ended scope stopped its watchdog
    std::uint64_t watchdog_renewals = 0;
    std::uint64_t extends = 0;  ///< the scopes' own that succeeded (lease::async_extend), not the watchdog's
    std::uint64_t leases_lost = 0;
    std::uint64_t handovers = 0;  ///< leases written out for another worker (lease::handover)
    std::uint64_t adoptions = 0;  ///< hand-overs this worker adopted
};

struct history {
    std::vector<hold_record> holds;
    std::vector<failure_record> failures;
    std::vector<write_record> writes;
    std::vector<reentry_record> reentries;
    std::vector<worker_summary> summaries;
};

/// One JSON object per line, with a "type" member.
[[nodiscard]] std::string to_json_line(const hold_record& r);
[[nodiscard]] std::string to_json_line(const failure_record& r);
[[nodiscard]] std::string to_json_line(const write_record& r);
[[nodiscard]] std::string to_json_line(const reentry_record& r);
[[nodiscard]] std::string to_json_line(const worker_summary& r);

/// Adds the records of one worker's history file. A line that does not parse (a worker killed
/// in the middle of a write) is skipped and counted in `bad_lines`.
void read_history_file(const std::string& path, history& into, std::size_t& bad_lines);

}  // namespace redlock::chaos

#endif
