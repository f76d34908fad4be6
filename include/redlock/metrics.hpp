// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_METRICS_HPP
#define REDLOCK_METRICS_HPP

#include <redlock/export.hpp>

#include <array>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace redlock {

/// A histogram of durations with fixed, roughly logarithmic buckets (microseconds): from an
/// acquire's 50 us on loopback to a hold of minutes.
struct REDLOCK_API latency_histogram {
    /// Upper bounds (inclusive) of the buckets; the last bucket has no upper bound.
    static constexpr std::array<std::uint64_t, 24> bucket_upper_us{
        50,     100,     200,     300,      500,      750,      1000,      2000,
        3000,   5000,    7500,    10000,    20000,    50000,    100000,    250000,
        500000, 1000000, 5000000, 10000000, 30000000, 60000000, 300000000, UINT64_MAX};
    std::array<std::uint64_t, 24> counts{};  ///< per bucket, not cumulative
    std::uint64_t count = 0;
    std::uint64_t sum_us = 0;
    std::uint64_t max_us = 0;

    /// Upper bound of the bucket holding quantile q in [0, 1]; 0 when empty. An estimate:
    /// use it for dashboards, not for benchmarks.
    [[nodiscard]] std::chrono::microseconds quantile(double q) const;
};

/// Per-node counters.
struct REDLOCK_API node_metrics {
    std::string node;            ///< URI without password
    std::uint64_t timeouts = 0;  ///< commands that ran out of the per-node timeout
    std::uint64_t errors = 0;    ///< other failures: lost replies, connection errors, error replies
    /// Restart quarantine (client_config::restart_quarantine): whether its grants count now,
    /// and if not, for how much longer (0 when unknown: not connected since its last reconnect).
    bool voting = true;
    std::int64_t quarantine_left_ms = 0;
    std::string run_id;      ///< of the server process last seen (empty with quarantine off)
    std::string last_error;  ///< the connection's last error, or why the node does not vote
    /// A cluster node (redis-cluster://): the masters in its slot map, and the redirects and
    /// retries its requests followed: MOVED (the map was out of date), ASK (a slot being
    /// migrated), TRYAGAIN (a multi-key script during a migration).
    std::size_t cluster_masters = 0;
    /// Connections open: to the masters in the map and to the seeds (a node gone from the map,
    /// failed over or removed, is no longer dialled).
    std::size_t cluster_connections = 0;
    std::uint64_t cluster_moved = 0;
    std::uint64_t cluster_asked = 0;
    std::uint64_t cluster_tryagain = 0;
    /// Slot maps read (CLUSTER SHARDS, or SLOTS where refused): on connect, after a MOVED or a
    /// failure, and every 5 s. A map read after a slot moved lets requests go to its new master
    /// without a MOVED.
    std::uint64_t cluster_refreshes = 0;
    /// A Sentinel node (redis-sentinel://): the master the sentinels named last ("host:port";
    /// empty before the first answer), and how many times it changed since (failovers seen).
    std::string sentinel_master;
    std::uint64_t sentinel_switches = 0;
};

/// A snapshot of a client's counters since it was constructed.
struct REDLOCK_API metrics_snapshot {
    std::uint64_t acquired = 0;   ///< async_acquire calls that returned a lease
    std::uint64_t attempts = 0;   ///< acquire rounds (an acquire with retries has several)
    std::uint64_t contended = 0;  ///< rounds in which some node said another owner holds it
    std::uint64_t failed_not_acquired = 0;
    std::uint64_t failed_wait_timeout = 0;
    std::uint64_t failed_quorum_unreachable = 0;
    std::uint64_t failed_validity_expired = 0;
    std::uint64_t failed_cancelled = 0;
    std::uint64_t failed_other = 0;  ///< invalid ttl, closed client, ...
    std::uint64_t extended = 0;
    std::uint64_t extend_failed = 0;
    std::uint64_t released = 0;
    std::uint64_t release_failed = 0;
    std::uint64_t leases_dropped = 0;  ///< leases destroyed while held: released in the background
    std::uint64_t leases_lost =
        0;  ///< leases found lost: by an extend, the watchdog, or their validity running out
    std::uint64_t watchdog_renewals = 0;        ///< extends made by watchdogs (also counted in `extended`)
    std::uint64_t watchdogs_running = 0;        ///< a gauge: watchdogs started and not yet stopped
    std::uint64_t release_wakeups = 0;          ///< waiting acquires woken by a release message
    std::uint64_t waits_unsubscribed = 0;       ///< waits by timed retries only: max_subscriptions reached
    std::uint64_t event_callback_failures = 0;  ///< client_config::on_event calls that threw
    std::vector<node_metrics> nodes;
    latency_histogram acquire_latency;  ///< call to lease, successful acquires only
    /// Grant (or adopt) to the lease's end, whatever ended it: release, drop, loss, or a close.
    latency_histogram hold_time;
    /// Call to end of the acquires that waited (lock_options::wait > 0) and found the resource
    /// held: granted, timed out, or cancelled. An acquire that got it at once is not in it.
    latency_histogram wait_time;

    /// The snapshot as a JSON object.
    [[nodiscard]] std::string to_json() const;
    /// The snapshot in Prometheus' text exposition format (version 0.0.4), every name starting
    /// with `prefix` + "_": counters as `_total`, the histograms in seconds, per-node values
    /// labelled `node="<uri without password>"`. See docs/observability.md.
    [[nodiscard]] std::string to_prometheus(std::string_view prefix = "redlock") const;
};

}  // namespace redlock

#endif
