// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_LOCK_METRICS_METRICS_RECORDER_HPP
#define REDLOCK_LOCK_METRICS_METRICS_RECORDER_HPP

#include <redlock/metrics.hpp>

#include <boost/system/error_code.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace redlock::detail {

/// One live histogram of metrics_snapshot: relaxed atomics, recorded from any thread.
class histogram_recorder {
public:
    void record(std::chrono::steady_clock::duration d) noexcept;
    [[nodiscard]] latency_histogram snapshot() const noexcept;

private:
    std::array<std::atomic<std::uint64_t>, latency_histogram::bucket_upper_us.size()> buckets_{};
    std::atomic<std::uint64_t> count_{0}, sum_us_{0}, max_us_{0};
};

/// The live counters behind client::metrics(). Relaxed atomics: any thread may record, and a
/// snapshot is a consistent-enough view for monitoring (each counter exact, not all at one instant).
class metrics_recorder {
public:
    using counter = std::atomic<std::uint64_t>;

    explicit metrics_recorder(std::vector<std::string> node_names);

    counter acquired{0}, attempts{0}, contended{0};
    counter failed_not_acquired{0}, failed_wait_timeout{0}, failed_quorum_unreachable{0};
    counter failed_validity_expired{0}, failed_cancelled{0}, failed_other{0};
    counter extended{0}, extend_failed{0}, released{0}, release_failed{0}, leases_dropped{0};
    counter leases_lost{0}, watchdog_renewals{0}, release_wakeups{0};
    counter watchdogs_running{0};
    counter waits_unsubscribed{0};  // a gauge: up in watchdog::start, down in watchdog::stop

    /// Counts the final error of a failed acquire under its cause.
    void acquire_failed(boost::system::error_code ec) noexcept;
    histogram_recorder acquire_latency, hold_time, wait_time;
    /// Counts a failed command on node i: request_timeout as a timeout, anything else as an error.
    void node_failure(std::size_t node, boost::system::error_code ec) noexcept;

    [[nodiscard]] metrics_snapshot snapshot() const;

private:
    struct node_counters {
        counter timeouts{0};
        counter errors{0};
    };
    std::vector<std::string> node_names_;
    std::unique_ptr<node_counters[]> nodes_;
};

}  // namespace redlock::detail

#endif
