// SPDX-License-Identifier: BSL-1.0
// metrics(): the histograms' buckets, and the snapshot as Prometheus' text format and as JSON.
#include "lock/metrics/metrics_recorder.hpp"
#include <redlock/metrics.hpp>

#include <boost/test/unit_test.hpp>

#include <nlohmann/json.hpp>

#include <set>
#include <string>

using namespace std::chrono_literals;
using redlock::latency_histogram;
using redlock::metrics_snapshot;

namespace {

bool has_line(const std::string& text, const std::string& line) {
    return ("\n" + text).find("\n" + line + "\n") != std::string::npos;
}

std::size_t bucket_of(std::uint64_t upper_us) {
    const auto& bounds = latency_histogram::bucket_upper_us;
    for (std::size_t i = 0; i < bounds.size(); ++i)
        if (bounds[i] == upper_us) return i;
    BOOST_FAIL("no bucket ends at " << upper_us << " us");
    return 0;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(metrics_text_suite)

BOOST_AUTO_TEST_CASE(a_duration_lands_in_the_first_bucket_that_holds_it) {
    redlock::detail::histogram_recorder recorder;
    recorder.record(3ms);     // on a bound: that bucket (bounds are inclusive)
    recorder.record(3001us);  // just above it: the next
    recorder.record(90s);     // a long hold: up to 300 s
    recorder.record(2h);      // beyond every bound: the open bucket
    recorder.record(-5ms);    // a clock that went back counts as 0
    const auto h = recorder.snapshot();
    BOOST_TEST(h.count == 5u);
    BOOST_TEST(h.counts[bucket_of(3000)] == 1u);
    BOOST_TEST(h.counts[bucket_of(5000)] == 1u);
    BOOST_TEST(h.counts[bucket_of(300000000)] == 1u);
    BOOST_TEST(h.counts.back() == 1u);
    BOOST_TEST(h.counts[bucket_of(50)] == 1u);
    BOOST_TEST(h.sum_us == 3000u + 3001u + 90000000u + 7200000000u);
    BOOST_TEST(h.max_us == 7200000000u);
    BOOST_TEST(h.quantile(0.5).count() == 5000);
    BOOST_TEST(h.quantile(1.0).count() == 7200000000);
}

BOOST_AUTO_TEST_CASE(histograms_are_cumulative_and_in_seconds) {
    metrics_snapshot s;
    s.hold_time.counts[bucket_of(50)] = 2;
    s.hold_time.counts[bucket_of(2000)] = 3;
    s.hold_time.counts.back() = 1;
    s.hold_time.count = 6;
    s.hold_time.sum_us = 3600000001;  // an hour and a microsecond: not rounded
    const auto text = s.to_prometheus();
    BOOST_TEST(has_line(text, "# TYPE redlock_hold_time_seconds histogram"), text);
    BOOST_TEST(has_line(text, "redlock_hold_time_seconds_bucket{le=\"0.00005\"} 2"), text);
    BOOST_TEST(has_line(text, "redlock_hold_time_seconds_bucket{le=\"0.001\"} 2"), text);
    BOOST_TEST(has_line(text, "redlock_hold_time_seconds_bucket{le=\"0.002\"} 5"), text);
    BOOST_TEST(has_line(text, "redlock_hold_time_seconds_bucket{le=\"300\"} 5"), text);
    BOOST_TEST(has_line(text, "redlock_hold_time_seconds_bucket{le=\"+Inf\"} 6"), text);
    BOOST_TEST(has_line(text, "redlock_hold_time_seconds_sum 3600.000001"), text);
    BOOST_TEST(has_line(text, "redlock_hold_time_seconds_count 6"), text);
    BOOST_TEST(has_line(text, "redlock_wait_time_seconds_count 0"), text);
    BOOST_TEST(has_line(text, "redlock_acquire_latency_seconds_bucket{le=\"+Inf\"} 0"), text);
}

BOOST_AUTO_TEST_CASE(counters_gauges_and_nodes_have_their_types_and_labels) {
    metrics_snapshot s;
    s.acquired = 7;
    s.failed_wait_timeout = 2;
    s.watchdogs_running = 3;
    redlock::node_metrics quoted;
    quoted.node = "unix:///tmp/a\"b\\c";
    quoted.timeouts = 4;
    quoted.voting = false;
    quoted.quarantine_left_ms = 1500;
    s.nodes.push_back(quoted);
    const auto text = s.to_prometheus("locks");
    BOOST_TEST(has_line(text, "# TYPE locks_acquired_total counter"), text);
    BOOST_TEST(has_line(text, "locks_acquired_total 7"), text);
    BOOST_TEST(has_line(text, "locks_acquire_failures_total{cause=\"wait_timeout\"} 2"), text);
    BOOST_TEST(has_line(text, "locks_acquire_failures_total{cause=\"not_acquired\"} 0"), text);
    BOOST_TEST(has_line(text, "# TYPE locks_watchdogs_running gauge"), text);
    BOOST_TEST(has_line(text, "locks_watchdogs_running 3"), text);
    BOOST_TEST(has_line(text, "locks_node_timeouts_total{node=\"unix:///tmp/a\\\"b\\\\c\"} 4"), text);
    BOOST_TEST(has_line(text, "locks_node_voting{node=\"unix:///tmp/a\\\"b\\\\c\"} 0"), text);
    BOOST_TEST(has_line(text, "locks_node_quarantine_left_seconds{node=\"unix:///tmp/a\\\"b\\\\c\"} 1.5"),
               text);
    BOOST_TEST(text.find("redlock_") == std::string::npos, text);
    // Only a cluster node has cluster families.
    BOOST_TEST(text.find("cluster_") == std::string::npos, text);
    redlock::node_metrics cluster;
    cluster.node = "redis-cluster://127.0.0.1:7000";
    cluster.cluster_masters = 3;
    cluster.cluster_moved = 5;
    s.nodes.push_back(cluster);
    const auto with_cluster = s.to_prometheus();
    BOOST_TEST(has_line(with_cluster, "redlock_cluster_masters{node=\"redis-cluster://127.0.0.1:7000\"} 3"),
               with_cluster);
    BOOST_TEST(
        has_line(with_cluster,
                 "redlock_cluster_redirects_total{node=\"redis-cluster://127.0.0.1:7000\",kind=\"moved\"} 5"),
        with_cluster);
    BOOST_TEST(with_cluster.find("cluster_masters{node=\"unix:") == std::string::npos, with_cluster);
}

BOOST_AUTO_TEST_CASE(every_family_is_declared_once_and_every_sample_follows_its_declaration) {
    metrics_snapshot s;
    redlock::node_metrics a, b;
    a.node = "redis://127.0.0.1:1";
    b.node = "redis-sentinel://:***@127.0.0.1:2#mymaster";  // as node_spec::to_string writes it
    s.nodes = {a, b};
    const auto text = s.to_prometheus();
    std::string family;
    std::set<std::string> declared;
    std::size_t samples = 0;
    for (std::size_t at = 0; at < text.size();) {
        const auto end = text.find('\n', at);
        BOOST_TEST_REQUIRE(end != std::string::npos);  // every line ends with a newline
        const auto line = text.substr(at, end - at);
        at = end + 1;
        if (line.starts_with("# TYPE ")) {
            family = line.substr(7, line.find(' ', 7) - 7);
            BOOST_TEST(declared.insert(family).second, family);
        } else if (!line.starts_with("# HELP ")) {
            ++samples;
            const auto name = line.substr(0, line.find_first_of("{ "));
            BOOST_TEST((name == family || name == family + "_bucket" || name == family + "_sum" ||
                        name == family + "_count"),
                       line << " after # TYPE " << family);
        }
    }
    BOOST_TEST(declared.count("redlock_sentinel_master_switches_total") == 1u);
    BOOST_TEST(samples > 3 * latency_histogram::bucket_upper_us.size());
}

BOOST_AUTO_TEST_CASE(the_json_has_the_three_histograms) {
    metrics_snapshot s;
    s.wait_time.counts[bucket_of(10000)] = 1;
    s.wait_time.count = 1;
    s.wait_time.sum_us = 9000;
    s.wait_time.max_us = 9000;
    const auto j = nlohmann::json::parse(s.to_json());
    BOOST_TEST(j["wait_time_us"]["count"] == 1);
    BOOST_TEST(j["wait_time_us"]["p50"] == 9000);
    BOOST_TEST(j["wait_time_us"]["buckets"].size() == latency_histogram::bucket_upper_us.size());
    BOOST_TEST(j["hold_time_us"]["count"] == 0);
    BOOST_TEST(j["acquire_latency_us"]["buckets"].back()["le"] == "+Inf");
}

BOOST_AUTO_TEST_SUITE_END()
