// The redlock command's I/O-free parts: durations, flags, the deployment verdicts.
#include "cli_args.hpp"
#include "deployment_check.hpp"
#include "unit/healthy_node_report.hpp"
#include "wait_status.hpp"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using redlock::cli::finding;
using redlock::cli::node_report;

namespace {

// Runs an arg_reader over `words` as if they followed the subcommand.
struct command_line {
    std::vector<std::string> words;
    std::vector<char*> argv;
    explicit command_line(std::vector<std::string> w) : words(std::move(w)) {
        for (auto& s : words)
            argv.push_back(s.data());
    }
    redlock::cli::arg_reader reader() { return {static_cast<int>(argv.size()), argv.data(), 0}; }
};

node_report healthy(std::string name, std::string run_id) {
    return redlock::test::healthy_node(std::move(name), std::move(run_id));
}

std::vector<node_report> three_healthy() {
    return {healthy("a", "r1"), healthy("b", "r2"), healthy("c", "r3")};
}

bool mentions(const std::vector<finding>& fs, finding::level l, const std::string& text) {
    return std::any_of(fs.begin(), fs.end(), [&](const finding& f) {
        return f.severity == l && f.text.find(text) != std::string::npos;
    });
}

redlock::client_config config(bool quarantine = true) {
    redlock::client_config c;
    c.restart_quarantine = quarantine;
    return c;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(cli_test)

BOOST_AUTO_TEST_CASE(durations) {
    using redlock::cli::parse_duration;
    BOOST_TEST(parse_duration("500ms").value().count() == 500);
    BOOST_TEST(parse_duration("10s").value().count() == 10'000);
    BOOST_TEST(parse_duration("2m").value().count() == 120'000);
    BOOST_TEST(parse_duration("1h").value().count() == 3'600'000);
    BOOST_TEST(parse_duration("3").value().count() == 3'000);  // bare: seconds
    BOOST_TEST(parse_duration("0").value().count() == 0);
    for (const char* bad : {"", "ms", "10x", "-1s", "1.5s", "10 s", "s10", "99999999999999999999s", "200h"})
        BOOST_TEST(!parse_duration(bad).has_value(), bad);
}

BOOST_AUTO_TEST_CASE(flags_values_and_the_separator) {
    command_line line({"--ttl", "5s", "--wait=1m", "--fenced", "res", "--", "echo", "--ttl"});
    auto args = line.reader();
    BOOST_TEST(args.next_flag().value() == "--ttl");
    BOOST_TEST(args.duration_value().count() == 5000);
    BOOST_TEST(args.next_flag().value() == "--wait");
    BOOST_TEST(args.duration_value().count() == 60'000);
    BOOST_TEST(args.next_flag().value() == "--fenced");
    BOOST_TEST(!args.next_flag().has_value());  // "res" is positional
    const auto rest = args.rest();
    BOOST_TEST(rest == (std::vector<std::string>{"res", "--", "echo", "--ttl"}),
               boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(usage_errors_name_the_flag) {
    auto message_of = [](std::vector<std::string> words, auto use) {
        command_line line(std::move(words));
        auto args = line.reader();
        try {
            args.next_flag();
            use(args);
        } catch (const redlock::cli::usage_error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    BOOST_TEST(message_of({"--ttl", "10x"}, [](auto& a) { a.duration_value(); }).find("--ttl") == 0u);
    BOOST_TEST(message_of({"--ttl"}, [](auto& a) { a.value(); }) == "--ttl needs a value");
    BOOST_TEST(message_of({"--n", "7"}, [](auto& a) { a.number_value(1, 5); }).find("--n: \"7\"") == 0u);
    BOOST_TEST(message_of({"--fenced=yes"}, [](auto& a) { a.next_flag(); }) == "--fenced takes no value");
    BOOST_TEST((redlock::cli::split_list("a,,b,") == std::vector<std::string>{"a", "b"}));
    // A cluster's seeds stay with their URI; every node URI has a scheme.
    BOOST_TEST(
        (redlock::cli::split_node_list("redis-cluster://a:1,b:2,redis://c:3,rediss-cluster://:p@d:4,e:5,"
                                       "redis-sentinel://s:1,s:2#m") ==
         std::vector<std::string>{"redis-cluster://a:1,b:2", "redis://c:3", "rediss-cluster://:p@d:4,e:5",
                                  "redis-sentinel://s:1,s:2#m"}));
    // A piece without a scheme after a one-server URI stays a piece of its own (and fails to parse).
    BOOST_TEST(
        (redlock::cli::split_node_list("redis://a:1,b:2") == std::vector<std::string>{"redis://a:1", "b:2"}));
}

BOOST_AUTO_TEST_CASE(a_healthy_deployment_is_safe) {
    const auto fs = redlock::cli::check_deployment(config(), three_healthy());
    BOOST_TEST(fs.empty());
    BOOST_TEST(redlock::cli::exit_status_of(fs) == 0);
}

BOOST_AUTO_TEST_CASE(each_unsafe_setting_is_reported) {
    auto nodes = three_healthy();
    nodes[0].role = "slave";
    nodes[1].maxmemory_policy = "allkeys-lru";
    nodes[1].maxmemory = 1 << 20;
    nodes[2].run_id = "r1";
    nodes[2].script_error = "NOPERM no eval";
    nodes[2].refused = {"SPUBLISH: NOPERM"};
    nodes[2].version = "6.2.14";
    const auto fs = redlock::cli::check_deployment(config(), nodes);
    using lv = finding::level;
    BOOST_TEST(mentions(fs, lv::unsafe, "nodes[0] a is a replica"));
    BOOST_TEST(mentions(fs, lv::unsafe, "maxmemory-policy allkeys-lru"));
    BOOST_TEST(mentions(fs, lv::unsafe, "nodes[2] c is the same server as nodes[0] a"));
    BOOST_TEST(mentions(fs, lv::unsafe, "cannot run scripts"));
    BOOST_TEST(mentions(fs, lv::unsafe, "refuses a command the lock needs: SPUBLISH"));
    BOOST_TEST(mentions(fs, lv::unsafe, "nodes[2] c runs Redis 6.2.14: the lock needs 7.0 or later"));
    BOOST_TEST(!mentions(fs, lv::unsafe, "nodes[1] b runs Redis"));
    BOOST_TEST(redlock::cli::exit_status_of(fs) == 2);
}

BOOST_AUTO_TEST_CASE(persistence_matters_only_without_the_quarantine) {
    auto nodes = three_healthy();
    BOOST_TEST(redlock::cli::check_deployment(config(true), nodes).empty());
    auto fs = redlock::cli::check_deployment(config(false), nodes);
    BOOST_TEST(mentions(fs, finding::level::unsafe, "no AOF and restart quarantine off"));
    for (auto& n : nodes) {
        n.aof = true;
        n.appendfsync = "everysec";
    }
    fs = redlock::cli::check_deployment(config(false), nodes);
    BOOST_TEST(mentions(fs, finding::level::warning, "appendfsync everysec"));
    BOOST_TEST(redlock::cli::exit_status_of(fs) == 1);
    for (auto& n : nodes)
        n.appendfsync = "always";
    BOOST_TEST(redlock::cli::check_deployment(config(false), nodes).empty());
}

BOOST_AUTO_TEST_CASE(node_counts_eviction_without_a_limit_and_clocks) {
    using lv = finding::level;
    auto two = three_healthy();
    two.pop_back();
    BOOST_TEST(mentions(redlock::cli::check_deployment(config(), two), lv::warning, "N = 2"));
    auto four = three_healthy();
    four.push_back(healthy("d", "r4"));
    BOOST_TEST(mentions(redlock::cli::check_deployment(config(), four), lv::warning, "N = 4 is even"));

    auto nodes = three_healthy();
    nodes[0].maxmemory_policy = "volatile-ttl";  // no maxmemory: nothing is evicted yet
    auto fs = redlock::cli::check_deployment(config(), nodes);
    BOOST_TEST(mentions(fs, lv::warning, "volatile-ttl evicts keys that have a ttl"));
    BOOST_TEST(redlock::cli::exit_status_of(fs) == 1);

    // Default allowance: 60 s x 0.01 + 2 ms = 602 ms.
    nodes = three_healthy();
    nodes[2].clock_offset_us = *nodes[0].clock_offset_us + 500'000;
    BOOST_TEST(redlock::cli::check_deployment(config(), nodes).empty());
    nodes[2].clock_offset_us = *nodes[0].clock_offset_us + 700'000;
    BOOST_TEST(
        mentions(redlock::cli::check_deployment(config(), nodes), lv::warning, "clocks (TIME) are 700 ms"));

    nodes = three_healthy();
    nodes[1].reachable = false;
    nodes[1].error = "connection refused";
    BOOST_TEST(mentions(redlock::cli::check_deployment(config(), nodes), lv::warning, "did not answer"));
}

// What the check can see of the assumptions the protocol keeps (docs/safety.md): a node reached
// through something that forwards, a node clock that runs off ours, a larger max_ttl recorded.
BOOST_AUTO_TEST_CASE(forwarding_clock_rates_and_recorded_max_ttls) {
    using lv = finding::level;
    auto nodes = three_healthy();
    for (auto& n : nodes) {
        n.dialed_host = "127.0.0.1";
        n.dialed_port = 7000;
        n.server_laddr = "127.0.0.1:7000";
    }
    nodes[1].dialed_host = "localhost";  // a name: compared by its port
    BOOST_TEST(redlock::cli::check_deployment(config(), nodes).empty());
    nodes[0].server_laddr = "127.0.0.1:6379";
    nodes[1].server_laddr = "10.0.0.5:7000";
    nodes[2].server_laddr = "10.0.0.5:7000";
    auto fs = redlock::cli::check_deployment(config(), nodes);
    BOOST_TEST(mentions(fs, lv::warning,
                        "nodes[0] a: the server sees our connection arrive at 127.0.0.1:6379, "
                        "not at 127.0.0.1:7000: a proxy"));
    BOOST_TEST(!mentions(fs, lv::warning, "nodes[1]"));
    BOOST_TEST(
        mentions(fs, lv::warning, "nodes[2] c: the server sees our connection arrive at 10.0.0.5:7000"));
    BOOST_TEST(redlock::cli::exit_status_of(fs) == 1);

    // 250 ms of ours; drift_factor 0.01 allows 2.5 ms beyond the 100 us the round trips leave open.
    nodes = three_healthy();
    for (auto& n : nodes) {
        n.clock_span_local_us = 250'000;
        n.clock_span_server_us = 250'000;
        n.clock_span_uncertainty_us = 100;
    }
    nodes[0].clock_span_server_us = 252'500;
    nodes[1].clock_span_server_us = 247'450;
    BOOST_TEST(redlock::cli::check_deployment(config(), nodes).empty());
    nodes[0].clock_span_server_us = 255'000;
    nodes[1].clock_span_server_us = 240'000;
    fs = redlock::cli::check_deployment(config(), nodes);
    BOOST_TEST(mentions(fs, lv::warning, "nodes[0] a: its clock (TIME) went +2.0% against ours over 250 ms"));
    BOOST_TEST(mentions(fs, lv::warning, "nodes[1] b: its clock (TIME) went -4.0% against ours"));
    BOOST_TEST(!mentions(fs, lv::warning, "nodes[2]"));

    nodes = three_healthy();
    nodes[1].recorded_max_ttl_ms = 300'000;
    nodes[2].recorded_max_ttl_ms = 60'000;
    BOOST_TEST(mentions(redlock::cli::check_deployment(config(), nodes), lv::info,
                        "a client of these nodes uses max_ttl 300000 ms, more than this config's 60000 ms"));
    BOOST_TEST(!mentions(redlock::cli::check_deployment(config(false), nodes), lv::info, "max_ttl"));
    nodes[1].recorded_max_ttl_ms = 60'000;
    BOOST_TEST(redlock::cli::check_deployment(config(), nodes).empty());
}

BOOST_AUTO_TEST_CASE(info_fields_and_the_holders_time_left) {
    const std::string info = "# Server\r\nredis_version:7.0.15\r\nrun_id:abc\r\nrun_id_x:no\r\n";
    BOOST_TEST(redlock::cli::info_field(info, "run_id") == "abc");
    BOOST_TEST(redlock::cli::info_field(info, "run").empty());
    BOOST_TEST(redlock::cli::info_field(info, "missing").empty());

    using redlock::cli::wait_status;
    // The holder keeps the lock while a quorum (3 of 5) still has the key: the third largest.
    BOOST_TEST(wait_status::quorum_time_left({900, -2, 300, 500, 100}) == 300);
    BOOST_TEST(wait_status::quorum_time_left({900, -2, -2, 500, -2}) < 0);
    BOOST_TEST(wait_status::quorum_time_left({-1}) == wait_status::no_expiry);
}

BOOST_AUTO_TEST_SUITE_END()
