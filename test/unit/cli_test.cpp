// SPDX-License-Identifier: BSL-1.0
// The redlock command's I/O-free parts: durations, flags, the command line (its help and
// usage errors, which run nothing), the deployment verdicts.
#include "cli_args.hpp"
#include "commands.hpp"
#include "deployment_check.hpp"
#include "deployment_flags.hpp"
#include "unit/healthy_node_report.hpp"
#include "wait_status.hpp"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <initializer_list>
#include <sstream>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using redlock::cli::finding;
using redlock::cli::node_report;

namespace {

// What `redlock WORDS...` printed and returned. Only for command lines that run nothing: help,
// and usage errors found before a command connects anywhere.
struct outcome {
    int status = -1;
    std::string out;
    std::string err;
};

outcome redlock_with(std::vector<std::string> words) {
    words.insert(words.begin(), "redlock");
    std::vector<const char*> argv;
    for (const auto& w : words)
        argv.push_back(w.c_str());
    std::ostringstream out, err;
    const int status = redlock::cli::redlock_main(static_cast<int>(argv.size()), argv.data(), out, err);
    return {status, out.str(), err.str()};
}

// The message of the parse error `parse` throws; "no error" if it throws none.
template <class Parse>
std::string parse_error_of(Parse parse) {
    try {
        parse();
    } catch (const CLI::ParseError& e) {
        return e.what();
    }
    return "no error";
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

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
    BOOST_TEST(parse_duration("1.5s").value().count() == 1'500);
    BOOST_TEST(parse_duration("0.25").value().count() == 250);  // bare: seconds
    BOOST_TEST(parse_duration("1m30s").value().count() == 90'000);
    BOOST_TEST(parse_duration("1h2m3.5s").value().count() == 3'723'500);
    BOOST_TEST(parse_duration("1s500ms").value().count() == 1'500);
    BOOST_TEST(parse_duration("0.001s").value().count() == 1);
    BOOST_TEST(parse_duration("1.25m").value().count() == 75'000);
    BOOST_TEST(parse_duration("168h").value().count() == 604'800'000);  // a week: the most
    const auto refused = [](std::initializer_list<const char*> texts) {
        for (const char* text : texts)
            BOOST_TEST(!parse_duration(text).has_value(), text);
    };
    refused({"", "ms", "10x", "-1s", "10 s", "s10", "+1s", "1e3s", "1.", "1.s", ".5s", "1.5.5s"});
    refused({"99999999999999999999s", "200h", "169h", "167h120m", "1.0005s", "0.5ms"});  // range, grain
    refused({"1m30", "30s1m", "1m1m", "1s1h"});  // parts: each with its unit, the largest first
}

BOOST_AUTO_TEST_CASE(duration_flags_take_a_value_after_the_flag_or_after_an_equals_sign) {
    CLI::App command;
    std::chrono::milliseconds ttl{10'000};
    std::optional<std::chrono::milliseconds> grace;
    redlock::cli::add_duration_flag(command, "--ttl", ttl, "");
    redlock::cli::add_duration_flag(command, "--grace", grace, "");
    command.parse("--ttl 5s --grace=1m");
    BOOST_TEST(ttl.count() == 5000);
    BOOST_TEST(grace.value().count() == 60'000);
    command.parse("--ttl=500ms");
    BOOST_TEST(ttl.count() == 500);
}

BOOST_AUTO_TEST_CASE(a_bad_or_missing_value_is_a_parse_error_naming_the_flag) {
    CLI::App command;
    std::chrono::milliseconds ttl{10'000};
    bool fenced = false;
    redlock::cli::add_duration_flag(command, "--ttl", ttl, "");
    redlock::cli::add_switch(command, "--fenced", fenced, "");
    BOOST_TEST(parse_error_of([&] { command.parse("--ttl 10x"); }) ==
               "--ttl: \"10x\" is not a duration (like 500ms, 1.5s, 1m30s)");
    BOOST_TEST(parse_error_of([&] { command.parse("--ttl=-1s"); }).find("--ttl: \"-1s\"") == 0u);
    BOOST_TEST(parse_error_of([&] { command.parse("--ttl"); }).find("--ttl: ") == 0u);
    BOOST_TEST(contains(parse_error_of([&] { command.parse("--fenced=no"); }), "fenced"));
    command.parse("--fenced --fenced");
    BOOST_TEST(fenced);
}

BOOST_AUTO_TEST_CASE(deployment_flags_split_the_node_list_and_refuse_what_they_cannot_use) {
    CLI::App command;
    redlock::cli::deployment_flags where;
    where.add_to(command);
    command.parse("--nodes=redis://a:1,redis-cluster://b:2,c:3 --restart-quarantine off --config f.json");
    BOOST_TEST((where.nodes == std::vector<std::string>{"redis://a:1", "redis-cluster://b:2,c:3"}));
    BOOST_TEST(where.restart_quarantine.value() == false);
    BOOST_TEST(where.config_file.value() == "f.json");
    command.parse("--restart-quarantine=on");
    BOOST_TEST(where.restart_quarantine.value() == true);
    BOOST_TEST(!where.failover_quarantine.has_value());
    command.parse("--failover-quarantine off");
    BOOST_TEST(where.failover_quarantine.value() == false);
    BOOST_TEST(parse_error_of([&] {
                   command.parse("--failover-quarantine maybe");
               }).find("--failover-quarantine: ") == 0u);
    BOOST_TEST(parse_error_of([&] { command.parse("--nodes ,"); }) == "--nodes: no node URI given");
    BOOST_TEST(parse_error_of([&] {
                   command.parse("--restart-quarantine maybe");
               }).find("--restart-quarantine: ") == 0u);

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

// `redlock COMMAND --help`: exit 0, its usage line and every flag it takes, on stdout.
BOOST_AUTO_TEST_CASE(every_command_has_a_help_that_lists_its_flags) {
    const std::vector<std::string> deployment = {"--config", "--nodes", "--restart-quarantine",
                                                 "--failover-quarantine"};
    struct command_flags {
        std::string command;
        std::vector<std::string> flags;
    };
    for (const auto& c : std::vector<command_flags>{
             {"run",
              {"--ttl", "--wait", "--fenced", "--permits", "--shared", "--writer", "--max-hold", "--grace",
               "--replicas", "--quiet"}},
             {"check", {}},
             {"demo", {"--nodes", "--cluster", "--workers", "--seconds", "--json"}},
             {"bench", {"--nodes", "--seconds", "--concurrency", "--json"}},
             {"inspect", {"--json"}},
             {"unlock", {"--force"}},
         }) {
        const auto help = redlock_with({c.command, "--help"});
        BOOST_TEST(help.status == 0, c.command);
        BOOST_TEST(help.err.empty(), c.command << ": " << help.err);
        BOOST_TEST(contains(help.out, "usage: redlock " + c.command), help.out);
        auto flags = c.flags;
        if (c.command != "demo" && c.command != "bench")
            flags.insert(flags.end(), deployment.begin(), deployment.end());
        for (const auto& flag : flags)
            BOOST_TEST(contains(help.out, "\n  " + flag + " "), c.command << " " << flag << ":\n"
                                                                          << help.out);
        // The worker processes' flags of the demo are not the user's.
        BOOST_TEST(!contains(help.out, "--worker "), help.out);
        BOOST_TEST(redlock_with({c.command, "-h"}).out == help.out);
    }
    const auto run_help = redlock_with({"run", "--help"}).out;
    BOOST_TEST(contains(run_help, "exit status: CMD's"), run_help);
    BOOST_TEST(contains(run_help, "the lease's ttl, renewed every third of it"), run_help);

    // `redlock --help` and `redlock help` list the commands; `redlock` alone too, as an error.
    for (const auto& words : {std::vector<std::string>{"--help"}, std::vector<std::string>{"help"}}) {
        const auto list = redlock_with(words);
        BOOST_TEST(list.status == 0);
        BOOST_TEST(contains(list.out, "usage: redlock COMMAND [options]\n"), list.out);
        for (const char* command : {"run", "check", "demo", "bench", "inspect", "unlock"})
            BOOST_TEST(contains(list.out, std::string("\n  ") + command + " "), list.out);
    }
    const auto none = redlock_with({});
    BOOST_TEST(none.status == 2);
    BOOST_TEST(contains(none.err, "\n  run "), none.err);
}

// Exit 2, and the message names the flag (or the command) it is about; nothing runs.
BOOST_AUTO_TEST_CASE(usage_errors_exit_2_and_name_the_flag) {
    const std::string nodes = "--nodes=redis://127.0.0.1:1";
    struct usage_case {
        std::vector<std::string> words;
        std::string message;
    };
    for (const auto& c : std::vector<usage_case>{
             {{"run", nodes, "--bogus", "r", "--", "true"}, "redlock run: unknown option --bogus"},
             {{"run", nodes, "--ttl"}, "redlock run: --ttl: "},
             {{"run", nodes, "--ttl", "10x", "r", "--", "true"}, "--ttl: \"10x\" is not a duration"},
             {{"run", nodes, "--wait=5y", "r", "--", "true"}, "--wait: \"5y\" is not a duration"},
             {{"run", nodes, "--permits", "0", "r", "--", "true"}, "--permits: "},
             {{"run", nodes, "--permits=many", "r", "--", "true"}, "--permits: "},
             {{"run", nodes, "--fenced=yes", "r", "--", "true"}, "fenced"},
             {{"run", "--nodes", ",", "r", "--", "true"}, "--nodes: no node URI given"},
             {{"run", nodes, "--restart-quarantine", "maybe", "r", "--", "true"}, "--restart-quarantine: "},
             {{"run", nodes, "--shared", "--writer", "r", "--", "true"}, "--shared and --writer"},
             {{"run", nodes, "--replicas", "-1", "r", "--", "true"}, "--replicas: "},
             {{"run", nodes, "--failover-quarantine", "no", "r", "--", "true"}, "--failover-quarantine: "},
             {{"run", nodes, "r", "true"}, "expected -- and a command"},
             {{"run", nodes, "--ttl", "1s", "--grace", "600ms", "r", "--", "true"}, "--grace: at most half"},
             {{"check", "--fenced"}, "redlock check: unknown option --fenced"},
             {{"check", nodes, "extra"}, "redlock check: "},
             {{"demo", "--workers", "101"}, "--workers: "},
             {{"demo", "--name", "A"}, "--name"},
             {{"demo", "--worker", nodes, "--restart-quarantine", "maybe"}, "--restart-quarantine: "},
             {{"bench", "--concurrency", "1,0"}, "--concurrency: "},
             {{"bench", "--seconds", "0"}, "--seconds: "},
             {{"bench", "--nodes", "http://x"}, "--nodes: "},
             {{"bench", "--nodes", ","}, "--nodes: no node URI given"},
             {{"inspect", nodes, "a", "b"}, "exactly one RESOURCE"},
             {{"inspect", nodes, "a", "--json"}, "\"--json\" after RESOURCE looks like a flag"},
             {{"run", nodes, "r", "--ttl", "5s", "--", "true"}, "\"--ttl\" after RESOURCE looks like a flag"},
             {{"unlock", nodes, "a"}, "--force is required"},
             {{"frobnicate"}, "unknown command \"frobnicate\""},
             {{"--bogus"}, "unknown option --bogus"},
         }) {
        const auto r = redlock_with(c.words);
        std::string line;
        for (const auto& w : c.words)
            line += w + " ";
        BOOST_TEST(r.status == 2, line);
        BOOST_TEST(contains(r.err, c.message), line << "-> " << r.err);
    }
}

// From RESOURCE on nothing is a flag of redlock's: after --, CMD's arguments are not parsed, even
// those that look like redlock's flags or are not durations. The error here is the nodes', found
// after parsing: had "--ttl 10x" been read, it would have been the parse error.
BOOST_AUTO_TEST_CASE(run_leaves_the_commands_arguments_alone) {
    const auto r =
        redlock_with({"run", "--nodes", "http://x", "r", "--", "cmd", "--ttl", "10x", "--bogus", "-h"});
    BOOST_TEST(r.status == 2);
    BOOST_TEST(contains(r.err, "redlock run: --nodes: "), r.err);
    BOOST_TEST(!contains(r.err, "--ttl"), r.err);
    BOOST_TEST(!contains(r.err, "--bogus"), r.err);
}

// A flag given twice: the last counts, as before CLI11 (whose default refuses it). --grace 600ms
// is too much for --ttl 1s, not for 2s: past the flags' checks, the nodes' is the error.
BOOST_AUTO_TEST_CASE(a_flag_given_twice_counts_as_the_last) {
    const std::vector<std::string> last_2s = {"run",     "--nodes", "http://x", "--ttl", "1s",  "--ttl=2s",
                                              "--grace", "600ms",   "r",        "--",    "true"};
    auto r = redlock_with(last_2s);
    BOOST_TEST(r.status == 2);
    BOOST_TEST(contains(r.err, "redlock run: --nodes: "), r.err);
    r = redlock_with(
        {"run", "--nodes", "http://x", "--ttl", "2s", "--ttl=1s", "--grace", "600ms", "r", "--", "true"});
    BOOST_TEST(r.status == 2);
    BOOST_TEST(contains(r.err, "redlock run: --grace: at most half of --ttl"), r.err);
}

BOOST_AUTO_TEST_CASE(a_healthy_deployment_is_safe) {
    const auto fs = redlock::cli::check_deployment(config(), three_healthy());
    BOOST_TEST(fs.empty());
    BOOST_TEST(redlock::cli::exit_status_of(fs) == 0);
}

// A node up for less than a second + max_ttl + drift does not vote: check says for how long,
// and when that leaves no quorum; it ends by itself, so it is no warning.
BOOST_AUTO_TEST_CASE(check_says_how_long_a_young_node_is_in_the_restart_quarantine) {
    using lv = finding::level;
    auto nodes = three_healthy();
    nodes[0].uptime_s = 5;  // 1 s + 60 s + 602 ms of drift, less 5 s: 56.6 s more
    auto fs = redlock::cli::check_deployment(config(), nodes);
    BOOST_TEST(
        mentions(fs, lv::info,
                 "nodes[0] a: up 5 s: in the restart quarantine for about 57 s more (it does not vote until "
                 "it has been up 62 s)"));
    BOOST_TEST(!mentions(fs, lv::info, "no quorum"));
    nodes[1].uptime_s = 30;
    nodes[2].uptime_s = 62;
    fs = redlock::cli::check_deployment(config(), nodes);
    BOOST_TEST(mentions(fs, lv::info, "nodes[1] b: up 30 s: in the restart quarantine for about 32 s more"));
    BOOST_TEST(!mentions(fs, lv::info, "nodes[2] c: up"));
    BOOST_TEST(mentions(fs, lv::info, "no quorum of nodes votes for about 32 s"));
    BOOST_TEST(redlock::cli::exit_status_of(fs) == 0);
    fs = redlock::cli::check_deployment(config(false), nodes);
    BOOST_TEST(!mentions(fs, lv::info, "restart quarantine for"));
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
    BOOST_TEST(redlock::cli::exit_status_of(fs) == 4);
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
    const auto unanswered = redlock::cli::check_deployment(config(), nodes);
    BOOST_TEST(mentions(unanswered, lv::unchecked, "did not answer"));
    BOOST_TEST(redlock::cli::exit_status_of(unanswered) == redlock::cli::check_unchecked);
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
