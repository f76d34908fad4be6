// SPDX-License-Identifier: BSL-1.0
// metrics_snapshot in Prometheus' text exposition format (version 0.0.4), so a server can serve
// it at /metrics without a client library of Prometheus' own.
#include <redlock/metrics.hpp>
#include <redlock/redis/node_spec.hpp>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

namespace redlock {

namespace {

// A label value with the three characters the format escapes.
std::string escaped(std::string_view value) {
    std::string out;
    out.reserve(value.size());
    for (const char c : value) {
        if (c == '\\') {
            out += "\\\\";
        } else if (c == '"') {
            out += "\\\"";
        } else if (c == '\n') {
            out += "\\n";
        } else {
            out += c;
        }
    }
    return out;
}

// Microseconds as seconds, exactly: a sum of hours of holds keeps its microseconds, which a
// double's "%g" would round away.
std::string seconds(std::uint64_t us) {
    auto text = std::to_string(us / 1000000);
    if (const auto fraction = us % 1000000; fraction != 0) {
        auto digits = std::to_string(fraction);
        digits.insert(0, 6 - digits.size(), '0');
        digits.erase(digits.find_last_not_of('0') + 1);
        text += "." + digits;
    }
    return text;
}

class exposition {
public:
    explicit exposition(std::string_view prefix) : prefix_(prefix) {}

    // The HELP and TYPE lines that open a family; `name` without the prefix.
    void family(std::string_view name, std::string_view type, std::string_view help) {
        out_ += "# HELP " + full(name) + " " + std::string(help) + "\n";
        out_ += "# TYPE " + full(name) + " " + std::string(type) + "\n";
    }
    // One sample; `labels` is "" or `key="value",...` with the values escaped.
    void sample(std::string_view name, const std::string& labels, const std::string& value) {
        out_ += full(name);
        if (!labels.empty()) out_ += "{" + labels + "}";
        out_ += " " + value + "\n";
    }
    void counter(std::string_view name, std::string_view help, std::uint64_t value) {
        family(name, "counter", help);
        sample(name, "", std::to_string(value));
    }
    void gauge(std::string_view name, std::string_view help, std::uint64_t value) {
        family(name, "gauge", help);
        sample(name, "", std::to_string(value));
    }
    // Prometheus' buckets are cumulative and their bounds in seconds; ours are per bucket, in us.
    void histogram(std::string_view name, std::string_view help, const latency_histogram& h) {
        family(name, "histogram", help);
        const std::string bucket = std::string(name) + "_bucket";
        std::uint64_t cumulative = 0;
        for (std::size_t i = 0; i < h.counts.size(); ++i) {
            cumulative += h.counts[i];
            const bool last = i + 1 == h.counts.size();
            sample(bucket,
                   "le=\"" + (last ? std::string("+Inf") : seconds(latency_histogram::bucket_upper_us[i])) +
                       "\"",
                   std::to_string(cumulative));
        }
        sample(std::string(name) + "_sum", "", seconds(h.sum_us));
        sample(std::string(name) + "_count", "", std::to_string(h.count));
    }
    std::string take() { return std::move(out_); }

private:
    std::string full(std::string_view name) const {
        return prefix_.empty() ? std::string(name) : prefix_ + "_" + std::string(name);
    }
    std::string prefix_;
    std::string out_;
};

using topology = redis::node_spec::topology;

// What a node is, read from its URI as the client was configured with it.
topology topology_of(const node_metrics& n) {
    redis::node_spec spec;
    std::string why;
    return redis::parse_node_spec(n.node, spec, why) ? topology::server : spec.kind;
}

std::string node_label(const node_metrics& n) {
    return "node=\"" + escaped(n.node) + "\"";
}

}  // namespace

std::string metrics_snapshot::to_prometheus(std::string_view prefix) const {
    exposition x(prefix);
    x.counter("acquired_total", "Acquires that returned a lease.", acquired);
    x.counter("acquire_rounds_total", "Acquire rounds; an acquire with retries has several.", attempts);
    x.counter("acquire_rounds_contended_total", "Rounds in which some node said another owner holds it.",
              contended);
    x.family("acquire_failures_total", "counter", "Acquires that failed, by cause.");
    const std::pair<const char*, std::uint64_t> failures[] = {
        {"not_acquired", failed_not_acquired},
        {"wait_timeout", failed_wait_timeout},
        {"quorum_unreachable", failed_quorum_unreachable},
        {"validity_expired", failed_validity_expired},
        {"cancelled", failed_cancelled},
        {"other", failed_other}};
    for (const auto& [cause, count] : failures)
        x.sample("acquire_failures_total", std::string("cause=\"") + cause + "\"", std::to_string(count));
    x.counter("extended_total", "Extensions that a quorum confirmed.", extended);
    x.counter("extend_failures_total", "Extensions that failed.", extend_failed);
    x.counter("released_total", "Leases released.", released);
    x.counter("release_failures_total", "Releases that failed; the keys expire with their ttl.",
              release_failed);
    x.counter("leases_dropped_total", "Leases destroyed while held, released in the background.",
              leases_dropped);
    x.counter("leases_lost_total",
              "Leases found lost: by an extend, the watchdog, or their validity running out.", leases_lost);
    x.counter("watchdog_renewals_total", "Extensions made by watchdogs.", watchdog_renewals);
    x.gauge("watchdogs_running", "Watchdogs started and not yet stopped.", watchdogs_running);
    x.counter("release_wakeups_total", "Waiting acquires woken by a release message.", release_wakeups);
    x.counter("waits_unsubscribed_total", "Waits by timed retries only: max_subscriptions reached.",
              waits_unsubscribed);
    x.counter("event_callback_failures_total", "client_config::on_event calls that threw.",
              event_callback_failures);

    // Each node's topology, read once: the cluster and Sentinel families are only for such nodes.
    std::vector<topology> kinds;
    kinds.reserve(nodes.size());
    for (const auto& n : nodes)
        kinds.push_back(topology_of(n));
    const auto any_of_kind = [&](topology kind) {
        return std::find(kinds.begin(), kinds.end(), kind) != kinds.end();
    };
    // A family of one sample per node (only those of topology `only`, if given), labelled by node;
    // none if no node is such.
    const auto per_node = [&](std::string_view name, std::string_view type, std::string_view help,
                              std::optional<topology> only, const auto& value) {
        if (nodes.empty() || (only && !any_of_kind(*only))) return;
        x.family(name, type, help);
        for (std::size_t i = 0; i < nodes.size(); ++i)
            if (!only || kinds[i] == *only) x.sample(name, node_label(nodes[i]), value(nodes[i]));
    };
    const auto count = [](std::uint64_t n) { return std::to_string(n); };
    per_node("node_timeouts_total", "counter", "Commands that ran out of the per-node timeout.", std::nullopt,
             [&](const node_metrics& n) { return count(n.timeouts); });
    per_node("node_errors_total", "counter",
             "Other failed commands: lost replies, connection errors, error replies.", std::nullopt,
             [&](const node_metrics& n) { return count(n.errors); });
    per_node("node_voting", "gauge", "1 when the node's grants count, 0 during its restart quarantine.",
             std::nullopt, [](const node_metrics& n) { return std::string(n.voting ? "1" : "0"); });
    per_node("node_quarantine_left_seconds", "gauge",
             "How long until a quarantined node votes (0 when unknown).", std::nullopt,
             [](const node_metrics& n) {
                 return seconds(static_cast<std::uint64_t>(std::max<std::int64_t>(n.quarantine_left_ms, 0)) *
                                1000);
             });
    per_node("cluster_masters", "gauge", "Masters in a cluster node's slot map.", topology::cluster,
             [&](const node_metrics& n) { return count(n.cluster_masters); });
    per_node("cluster_connections", "gauge", "Connections a cluster node keeps: its masters' and its seeds'.",
             topology::cluster, [&](const node_metrics& n) { return count(n.cluster_connections); });
    if (any_of_kind(topology::cluster)) {
        x.family("cluster_redirects_total", "counter",
                 "Redirects and retries a cluster node's requests followed.");
        for (std::size_t i = 0; i < nodes.size(); ++i) {
            if (kinds[i] != topology::cluster) continue;
            const auto& n = nodes[i];
            for (const auto& [kind, value] :
                 {std::pair{"moved", n.cluster_moved}, std::pair{"ask", n.cluster_asked},
                  std::pair{"tryagain", n.cluster_tryagain}})
                x.sample("cluster_redirects_total", node_label(n) + ",kind=\"" + kind + "\"", count(value));
        }
    }
    per_node("cluster_slot_map_reads_total", "counter",
             "Slot maps read (CLUSTER SHARDS, or CLUSTER SLOTS where refused).", topology::cluster,
             [&](const node_metrics& n) { return count(n.cluster_refreshes); });
    per_node("sentinel_master_switches_total", "counter", "Changes of the master the sentinels named.",
             topology::sentinel, [&](const node_metrics& n) { return count(n.sentinel_switches); });

    x.histogram("acquire_latency_seconds", "Call to lease, successful acquires only.", acquire_latency);
    x.histogram("hold_time_seconds", "Grant to the lease's end, whatever ended it.", hold_time);
    x.histogram("wait_time_seconds", "Call to end of the acquires that waited and found the resource held.",
                wait_time);
    return x.take();
}

}  // namespace redlock
