// SPDX-License-Identifier: BSL-1.0
#include "lock/metrics/metrics_recorder.hpp"

#include <redlock/error.hpp>

#include <boost/asio/error.hpp>

#include <algorithm>

namespace redlock::detail {

namespace {
constexpr auto relaxed = std::memory_order_relaxed;
}

metrics_recorder::metrics_recorder(std::vector<std::string> node_names)
    : node_names_(std::move(node_names)), nodes_(new node_counters[node_names_.size()]) {}

void metrics_recorder::acquire_failed(boost::system::error_code ec) noexcept {
    if (ec == error::not_acquired) {
        failed_not_acquired.fetch_add(1, relaxed);
    } else if (ec == error::wait_timeout) {
        failed_wait_timeout.fetch_add(1, relaxed);
    } else if (ec == error::quorum_unreachable) {
        failed_quorum_unreachable.fetch_add(1, relaxed);
    } else if (ec == error::validity_expired) {
        failed_validity_expired.fetch_add(1, relaxed);
    } else if (ec == boost::asio::error::operation_aborted) {
        failed_cancelled.fetch_add(1, relaxed);
    } else {
        failed_other.fetch_add(1, relaxed);
    }
}

void histogram_recorder::record(std::chrono::steady_clock::duration d) noexcept {
    const auto us = static_cast<std::uint64_t>(
        std::max<std::int64_t>(0, std::chrono::duration_cast<std::chrono::microseconds>(d).count()));
    const auto& bounds = latency_histogram::bucket_upper_us;
    const auto it = std::lower_bound(bounds.begin(), bounds.end(), us);
    buckets_[static_cast<std::size_t>(it - bounds.begin())].fetch_add(1, relaxed);
    count_.fetch_add(1, relaxed);
    sum_us_.fetch_add(us, relaxed);
    std::uint64_t seen = max_us_.load(relaxed);
    while (us > seen && !max_us_.compare_exchange_weak(seen, us, relaxed)) {
    }
}

latency_histogram histogram_recorder::snapshot() const noexcept {
    latency_histogram h;
    for (std::size_t i = 0; i < buckets_.size(); ++i)
        h.counts[i] = buckets_[i].load(relaxed);
    h.count = count_.load(relaxed);
    h.sum_us = sum_us_.load(relaxed);
    h.max_us = max_us_.load(relaxed);
    return h;
}

void metrics_recorder::node_failure(std::size_t node, boost::system::error_code ec) noexcept {
    if (node >= node_names_.size()) return;
    if (ec == error::request_timeout) {
        nodes_[node].timeouts.fetch_add(1, relaxed);
    } else {
        nodes_[node].errors.fetch_add(1, relaxed);
    }
}

metrics_snapshot metrics_recorder::snapshot() const {
    metrics_snapshot s;
    s.acquired = acquired.load(relaxed);
    s.attempts = attempts.load(relaxed);
    s.contended = contended.load(relaxed);
    s.failed_not_acquired = failed_not_acquired.load(relaxed);
    s.failed_wait_timeout = failed_wait_timeout.load(relaxed);
    s.failed_quorum_unreachable = failed_quorum_unreachable.load(relaxed);
    s.failed_validity_expired = failed_validity_expired.load(relaxed);
    s.failed_cancelled = failed_cancelled.load(relaxed);
    s.failed_other = failed_other.load(relaxed);
    s.extended = extended.load(relaxed);
    s.extend_failed = extend_failed.load(relaxed);
    s.released = released.load(relaxed);
    s.release_failed = release_failed.load(relaxed);
    s.leases_dropped = leases_dropped.load(relaxed);
    s.leases_lost = leases_lost.load(relaxed);
    s.watchdog_renewals = watchdog_renewals.load(relaxed);
    s.watchdogs_running = watchdogs_running.load(relaxed);
    s.waits_unsubscribed = waits_unsubscribed.load(relaxed);
    s.release_wakeups = release_wakeups.load(relaxed);
    for (std::size_t i = 0; i < node_names_.size(); ++i) {
        node_metrics n;
        n.node = node_names_[i];
        n.timeouts = nodes_[i].timeouts.load(relaxed);
        n.errors = nodes_[i].errors.load(relaxed);
        s.nodes.push_back(std::move(n));
    }
    s.acquire_latency = acquire_latency.snapshot();
    s.hold_time = hold_time.snapshot();
    s.wait_time = wait_time.snapshot();
    return s;
}

}  // namespace redlock::detail
