// SPDX-License-Identifier: BSL-1.0
// redlock check: lint a deployment for settings that make its locks unsafe.
#include "cli_args.hpp"
#include "commands.hpp"
#include "deployment_check.hpp"
#include "deployment_flags.hpp"
#include "lock/nodes/node_health.hpp"
#include "node_connections.hpp"
#include "topology_probe.hpp"
#include <redlock/redis/node_address.hpp>
#include <redlock/redis/node_spec.hpp>
#include <redlock/resp/request.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace redlock::cli {

namespace {

namespace asio = boost::asio;
using boost::system::error_code;
using clock_type = std::chrono::steady_clock;

constexpr const char* check_footer =
    "Connects to every node and says what makes the deployment's locks unsafe, and why: a node\n"
    "that is a replica or older than Redis 7.0; the same server listed twice (same run_id); a\n"
    "maxmemory-policy that may evict lock keys; no persistence with the restart quarantine off;\n"
    "an even N, or N = 2; node clocks further apart than the drift allowance, or one that runs\n"
    "faster or slower than drift_factor allows; a proxy or port mapping between us and a node;\n"
    "scripting disabled or an ACL that refuses a command the lock needs. Says when another\n"
    "client of the nodes uses a larger max_ttl. Writes and deletes only its own probe key.\n"
    "\n"
    "A cluster node (redis-cluster://): reads the slot map, state and cluster-node-timeout from\n"
    "the first seed that gives them, then checks every master as a server; says how many slots\n"
    "have no master, a cluster_state that is not ok, a master without a replica, a failover that\n"
    "can come within a lease. A Sentinel node (redis-sentinel://): asks every sentinel about the\n"
    "master (SENTINEL MASTER, CKQUORUM, GET-MASTER-ADDR-BY-NAME); says which sentinels do not\n"
    "answer, fewer than 3, a name none knows, sentinels that name different masters, a failover\n"
    "that is impossible or can come within a lease; then checks the master they name. A cluster\n"
    "or a Sentinel node is one voter of N.\n"
    "\n"
    "--json: one JSON object instead of the lines: the findings, their counts, the verdict.\n"
    "exit status: 0 safe; 1 safe, with warnings; 3 not checked: a node did not answer (nothing\n"
    "unsafe among the others); 4 unsafe; 2 for usage errors.\n";

// The replies of the probe request, in order.
enum probe : std::size_t {
    info_server,
    info_replication,
    info_persistence,
    config_get,
    time_now,
    eval,
    set,
    publish,
    del,
    client_info,
    recorded_max_ttl
};

// The second TIME comes this long after the first: long enough to see a clock that runs more
// than 1% off against the round trips' uncertainty, short enough not to hold the check up.
constexpr auto clock_span = std::chrono::milliseconds(250);

resp::request probe_request(const client_config& cfg) {
    const std::string key = "{" + cfg.key_prefix + "redlock-check}:probe";
    resp::request req;
    req.push("INFO", "server");
    req.push("INFO", "replication");
    req.push("INFO", "persistence");
    req.push("CONFIG", "GET", "maxmemory*", "appendfsync");
    req.push("TIME");
    req.push("EVAL", "return 1", "0");
    req.push("SET", key, "1", "NX", "PX", "1000");
    req.push("SPUBLISH", key, "check");
    req.push("DEL", key);
    req.push("CLIENT", "INFO");
    req.push("GET", "{" + cfg.key_prefix + "}:max_ttl");
    return req;
}

std::string text_of(const resp::value& v) {
    return v.is_error() ? v.str : resp::to_string(v);
}

void read_config(const resp::value& v, node_report& r) {
    if (v.is_error()) {
        r.config_error = v.str;
        return;
    }
    // RESP3 answers a map (elements: key, value, key, value...), RESP2 a flat array: same layout.
    for (std::size_t i = 0; i + 1 < v.elements.size(); i += 2) {
        const auto& name = v.elements[i].str;
        const auto& value = v.elements[i + 1].str;
        if (name == "maxmemory-policy") r.maxmemory_policy = value;
        if (name == "appendfsync") r.appendfsync = value;
        if (name == "maxmemory") {
            try {
                r.maxmemory = std::stoll(value);
            } catch (const std::exception&) {
            }
        }
    }
}

// A TIME reply in microseconds since the epoch; nullopt if it is not one.
std::optional<std::int64_t> time_us(const resp::value& t) {
    if (t.elements.size() != 2) return std::nullopt;
    try {
        return std::stoll(t.elements[0].str) * 1'000'000 + std::stoll(t.elements[1].str);
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

std::int64_t micros(clock_type::duration d) {
    return std::chrono::duration_cast<std::chrono::microseconds>(d).count();
}

// CLIENT INFO's "laddr=ip:port" field; empty if absent (an ACL refused it, a unix socket).
std::string laddr_of(const resp::value& v) {
    if (v.is_error()) return {};
    const auto at = v.str.find("laddr=");
    if (at == std::string::npos) return {};
    const auto end = v.str.find(' ', at);
    return v.str.substr(at + 6, end == std::string::npos ? std::string::npos : end - at - 6);
}

void read_replies(const std::vector<resp::value>& replies, clock_type::time_point sent,
                  clock_type::time_point received, node_report& r) {
    r.run_id = info_field(replies[info_server].str, "run_id");
    r.version = info_field(replies[info_server].str, "redis_version");
    if (detail::server_info server; detail::parse_server_info(replies[info_server].str, server)) {
        r.uptime_s = server.uptime.count();
    }
    r.role = info_field(replies[info_replication].str, "role");
    const auto aof = info_field(replies[info_persistence].str, "aof_enabled");
    if (!aof.empty()) r.aof = aof == "1";
    read_config(replies[config_get], r);
    if (const auto server_us = time_us(replies[time_now])) {
        r.clock_offset_us = *server_us - micros((sent + (received - sent) / 2).time_since_epoch());
        r.clock_uncertainty_us = micros(received - sent) / 2 + 1;
    }
    r.server_laddr = laddr_of(replies[client_info]);
    const auto& recorded = replies[recorded_max_ttl];
    if (recorded.kind == resp::type::bulk_string) {
        try {
            r.recorded_max_ttl_ms = std::stoll(recorded.str);
        } catch (const std::exception&) {
        }
    }
    if (replies[eval].is_error()) r.script_error = replies[eval].str;
    for (auto [index, name] :
         {std::pair{set, "SET"}, std::pair{publish, "SPUBLISH"}, std::pair{del, "DEL"}}) {
        const auto& v = replies[index];
        if (v.is_error() && v.error_code() == "NOPERM")
            r.refused.push_back(std::string(name) + ": " + text_of(v));
    }
}

// A second TIME, clock_span after the probe's, whose reading (clock_offset_us, taken at
// `first_mid`) is in `r`: how far the node's clock went against ours in between.
void measure_clock_span(redis::connection& conn, asio::steady_timer& timer, clock_type::time_point first_mid,
                        node_report& r) {
    timer.expires_after(clock_span);
    timer.async_wait([&, first_mid](error_code) {
        resp::request time;
        time.push("TIME");
        const auto sent = clock_type::now();
        conn.async_exec(
            time, std::chrono::seconds(2),
            [&, sent, first_mid](error_code ec, std::vector<resp::value> replies) {
                const auto received = clock_type::now();
                const auto server_us = !ec && replies.size() == 1 ? time_us(replies.front()) : std::nullopt;
                if (server_us) {
                    const auto mid = sent + (received - sent) / 2;
                    const auto offset_us = *server_us - micros(mid.time_since_epoch());
                    r.clock_span_local_us = micros(mid - first_mid);
                    r.clock_span_server_us = *r.clock_span_local_us + (offset_us - *r.clock_offset_us);
                    r.clock_span_uncertainty_us = r.clock_uncertainty_us + micros(received - sent) / 2 + 1;
                }
                conn.close();
            });
    });
}

// A server to probe, and the report its answers go to.
struct probe_target {
    redis::node_address address;
    node_report* report;
};

void probe_servers(const client_config& cfg, const std::vector<probe_target>& targets) {
    asio::io_context ioc(1);
    std::vector<std::unique_ptr<redis::connection>> conns;
    std::vector<std::unique_ptr<asio::steady_timer>> timers;
    const auto request = probe_request(cfg);
    const auto limit = cfg.connect_timeout + std::chrono::seconds(2) + clock_span + std::chrono::seconds(2);
    for (std::size_t i = 0; i < targets.size(); ++i) {
        const auto& address = targets[i].address;
        auto& report = *targets[i].report;
        if (report.name.empty()) report.name = address.to_string();
        if (address.kind != redis::node_address::transport::unix_socket) {
            report.dialed_host = address.host;
            report.dialed_port = address.port;
        }
        report.error = "no answer within " + std::to_string(limit.count()) + " ms";
        conns.push_back(make_connection(ioc.get_executor(), cfg, address));
        timers.push_back(std::make_unique<asio::steady_timer>(ioc));
    }
    for (std::size_t i = 0; i < targets.size(); ++i) {
        auto& report = *targets[i].report;
        conns[i]->async_connect([&, i](error_code ec) {
            if (ec) {
                const auto& why = conns[i]->last_error().message;
                report.error = why.empty() ? ec.message() : why;
                conns[i]->close();
                return;
            }
            const auto sent = clock_type::now();
            conns[i]->async_exec(request, std::chrono::seconds(2),
                                 [&, i, sent](error_code ec2, std::vector<resp::value> replies) {
                                     const auto received = clock_type::now();
                                     if (ec2 || replies.size() != request.size()) {
                                         report.error = ec2 ? ec2.message() : "unexpected reply";
                                         conns[i]->close();
                                         return;
                                     }
                                     report.reachable = true;
                                     report.error.clear();
                                     read_replies(replies, sent, received, report);
                                     if (!report.clock_offset_us) {
                                         conns[i]->close();
                                         return;
                                     }
                                     measure_clock_span(*conns[i], *timers[i], sent + (received - sent) / 2,
                                                        report);
                                 });
        });
    }
    ioc.run_for(limit + std::chrono::seconds(1));
}

// A master a seed or the sentinels named, reached as the URI's first address is: its transport,
// credentials and database.
redis::node_address master_address(const redis::node_spec& spec, const std::string& host,
                                   std::uint16_t port) {
    auto address = spec.addresses.front();
    address.host = host;
    address.port = port;
    return address;
}

// Every voter: the seeds and sentinels first, then every server they lead to, and the single
// servers, probed alike.
std::vector<voter_report> probe_deployment(const client_config& cfg) {
    const auto specs = cfg.node_specs();
    auto voters = probe_topologies(cfg, specs);
    std::vector<probe_target> targets;
    for (std::size_t i = 0; i < voters.size(); ++i) {
        if (auto* server = std::get_if<node_report>(&voters[i])) {
            targets.push_back({specs[i].addresses.front(), server});
        } else if (auto* cluster = std::get_if<cluster_report>(&voters[i])) {
            for (auto& m : cluster->masters) {
                m.server.name = "master " + endpoint(m.host, m.port);
                targets.push_back({master_address(specs[i], m.host, m.port), &m.server});
            }
        } else if (auto* sentinel = std::get_if<sentinel_report>(&voters[i])) {
            if (sentinel->master_host.empty()) continue;
            sentinel->master.name = "master " + endpoint(sentinel->master_host, sentinel->master_port);
            targets.push_back(
                {master_address(specs[i], sentinel->master_host, sentinel->master_port), &sentinel->master});
        }
    }
    probe_servers(cfg, targets);
    return voters;
}

const char* level_name(finding::level l) {
    switch (l) {
        case finding::level::info:
            return "info";
        case finding::level::warning:
            return "warning";
        case finding::level::unchecked:
            return "unchecked";
        case finding::level::unsafe:
            return "unsafe";
    }
    return "?";
}

const char* verdict_of(int status) {
    switch (status) {
        case check_safe:
            return "safe";
        case check_warnings:
            return "safe, with warnings";
        case check_unchecked:
            return "NOT CHECKED";
        default:
            return "UNSAFE";
    }
}

struct check_settings {
    deployment_flags where;
    bool json = false;
};

int check_command(const check_settings& s) {
    // Not validated as a whole: a node listed twice is a finding here, not a usage error.
    const auto cfg = s.where.to_config(false);
    const auto voters = probe_deployment(cfg);
    const auto findings = check_deployment(cfg, voters);
    const int status = exit_status_of(findings);
    std::size_t unsafe = 0, unchecked = 0, warnings = 0;
    for (const auto& f : findings) {
        unsafe += f.severity == finding::level::unsafe ? 1 : 0;
        unchecked += f.severity == finding::level::unchecked ? 1 : 0;
        warnings += f.severity == finding::level::warning ? 1 : 0;
    }
    if (s.json) {
        auto list = nlohmann::json::array();
        for (const auto& f : findings)
            list.push_back({{"level", level_name(f.severity)}, {"text", f.text}});
        const nlohmann::json report = {{"nodes", voters.size()}, {"findings", list},
                                       {"unsafe", unsafe},       {"unchecked", unchecked},
                                       {"warnings", warnings},   {"verdict", verdict_of(status)},
                                       {"exit_status", status}};
        std::printf("%s\n", report.dump(2).c_str());
        return status;
    }
    for (const auto& f : findings)
        std::printf("%s: %s\n", level_name(f.severity), f.text.c_str());
    std::printf("%zu node(s) checked: %zu unsafe, %zu not answering, %zu warning(s): %s\n", voters.size(),
                unsafe, unchecked, warnings, verdict_of(status));
    return status;
}

}  // namespace

subcommand add_check_command(CLI::App& redlock) {
    auto* check = add_command(redlock, "check", "say what makes a deployment's locks unsafe",
                              "redlock check [options]", check_footer);
    auto settings = std::make_shared<check_settings>();
    settings->where.add_to(*check);
    add_switch(*check, "--json", settings->json,
               "one JSON object: the findings, their counts and the verdict");
    return {check, [settings] { return check_command(*settings); }};
}

}  // namespace redlock::cli
