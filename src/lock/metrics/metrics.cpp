// SPDX-License-Identifier: BSL-1.0
#include <redlock/metrics.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

namespace redlock {

std::chrono::microseconds latency_histogram::quantile(double q) const {
    std::uint64_t total = 0;
    for (auto c : counts)
        total += c;
    if (total == 0) return std::chrono::microseconds::zero();
    q = std::clamp(q, 0.0, 1.0);
    const auto rank = static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(total)));
    std::uint64_t seen = 0;
    for (std::size_t i = 0; i < counts.size(); ++i) {
        seen += counts[i];
        if (seen >= rank && seen > 0) {
            // The open-ended last bucket reports the largest latency seen instead of UINT64_MAX.
            auto bound = i + 1 == counts.size() ? max_us : bucket_upper_us[i];
            return std::chrono::microseconds(static_cast<std::int64_t>(std::min(bound, max_us)));
        }
    }
    return std::chrono::microseconds(static_cast<std::int64_t>(max_us));
}

namespace {

nlohmann::json histogram_json(const latency_histogram& histogram) {
    nlohmann::json h;
    h["count"] = histogram.count;
    h["sum"] = histogram.sum_us;
    h["max"] = histogram.max_us;
    h["p50"] = histogram.quantile(0.5).count();
    h["p99"] = histogram.quantile(0.99).count();
    auto& buckets = h["buckets"] = nlohmann::json::array();
    for (std::size_t i = 0; i < histogram.counts.size(); ++i) {
        nlohmann::json b;
        if (i + 1 < histogram.counts.size()) {
            b["le"] = latency_histogram::bucket_upper_us[i];
        } else {
            b["le"] = "+Inf";
        }
        b["count"] = histogram.counts[i];
        buckets.push_back(std::move(b));
    }
    return h;
}

}  // namespace

std::string metrics_snapshot::to_json() const {
    nlohmann::json j;
    j["acquired"] = acquired;
    j["attempts"] = attempts;
    j["contended"] = contended;
    j["failed"] = {{"not_acquired", failed_not_acquired},
                   {"wait_timeout", failed_wait_timeout},
                   {"quorum_unreachable", failed_quorum_unreachable},
                   {"validity_expired", failed_validity_expired},
                   {"cancelled", failed_cancelled},
                   {"other", failed_other}};
    j["extended"] = extended;
    j["extend_failed"] = extend_failed;
    j["released"] = released;
    j["release_failed"] = release_failed;
    j["leases_dropped"] = leases_dropped;
    j["leases_lost"] = leases_lost;
    j["watchdog_renewals"] = watchdog_renewals;
    j["watchdogs_running"] = watchdogs_running;
    j["waits_unsubscribed"] = waits_unsubscribed;
    j["event_callback_failures"] = event_callback_failures;
    j["release_wakeups"] = release_wakeups;
    auto& nodes_json = j["nodes"] = nlohmann::json::array();
    for (const auto& n : nodes)
        nodes_json.push_back({{"node", n.node},
                              {"timeouts", n.timeouts},
                              {"errors", n.errors},
                              {"voting", n.voting},
                              {"quarantine_left_ms", n.quarantine_left_ms},
                              {"run_id", n.run_id},
                              {"last_error", n.last_error}});
    j["acquire_latency_us"] = histogram_json(acquire_latency);
    j["hold_time_us"] = histogram_json(hold_time);
    j["wait_time_us"] = histogram_json(wait_time);
    return j.dump();
}

}  // namespace redlock
