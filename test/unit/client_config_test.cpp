// SPDX-License-Identifier: BSL-1.0
#include <redlock/config.hpp>
#include <redlock/error.hpp>

#include <boost/system/errc.hpp>
#include <boost/system/system_error.hpp>
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <string_view>

#include <stdlib.h>
#include <unistd.h>

using namespace std::chrono_literals;
using redlock::client_config;
using redlock::error;

namespace {

bool contains(const std::string& text, std::string_view part) {
    return text.find(part) != std::string::npos;
}

client_config parse_ok(std::string_view json) {
    boost::system::error_code ec;
    std::string why;
    client_config c = client_config::from_json(json, ec, why);
    BOOST_TEST_INFO("json: " << json << " why: " << why);
    BOOST_TEST(!ec);
    return c;
}

// Returns the message after checking the code and that the message has the common prefix.
std::string parse_fail(std::string_view json, error expected = error::invalid_config) {
    boost::system::error_code ec;
    std::string why;
    client_config c = client_config::from_json(json, ec, why);
    BOOST_TEST_INFO("json: " << json << " why: " << why);
    BOOST_TEST((ec == expected));
    BOOST_TEST(why.rfind("client_config: ", 0) == 0);
    // On failure the result is a default config, not a half-filled one.
    BOOST_TEST(c.nodes.empty());
    return why;
}

// A config with one valid node and `rest` spliced in as further top-level members.
std::string with_node(std::string_view rest) {
    return R"({"nodes": ["redis://127.0.0.1:7001"], )" + std::string(rest) + "}";
}

client_config valid_config() {
    client_config c;
    c.nodes = {"redis://127.0.0.1:7001", "redis://127.0.0.1:7002", "redis://127.0.0.1:7003"};
    return c;
}

// A file in the temp directory, removed at the end of the test.
struct temp_file {
    std::string path;

    explicit temp_file(std::string_view content) {
        path = (std::filesystem::temp_directory_path() / "redlock_client_config_XXXXXX").string();
        int fd = ::mkstemp(path.data());
        BOOST_REQUIRE(fd >= 0);
        ::close(fd);
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out << content;
        BOOST_REQUIRE(out.good());
    }
    ~temp_file() { ::unlink(path.c_str()); }
    temp_file(const temp_file&) = delete;
    temp_file& operator=(const temp_file&) = delete;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(client_config_test)

BOOST_AUTO_TEST_CASE(full_example_sets_every_field) {
    auto c = parse_ok(R"({
        "nodes": ["redis://127.0.0.1:7001", "redis://:pw@host:7002/0", "unix:///run/redis.sock"],
        "key_prefix": "app:", "max_ttl_ms": 30000, "drift_factor": 0.02,
        "node_timeout_ms": 40, "connect_timeout_ms": 2000, "client_name": "worker-7",
        "health_check_interval_ms": 0,
        "restart_quarantine": false, "max_queued_requests": 500, "max_subscriptions": 7,
        "identify_holder": false,
        "retry": {"min_delay_ms": 10, "max_delay_ms": 20},
        "tls": {"ca_file": "/ca.pem", "cert_file": "/c.pem", "key_file": "/k.pem", "server_name": "redis.local",
                "verify": false}
    })");
    BOOST_TEST(c.nodes.size() == 3u);
    BOOST_TEST(c.nodes[1] == "redis://:pw@host:7002/0");
    BOOST_TEST(c.nodes[2] == "unix:///run/redis.sock");
    BOOST_TEST(c.key_prefix == "app:");
    BOOST_TEST(c.max_ttl.count() == 30000);
    BOOST_TEST(c.drift_factor == 0.02);
    BOOST_TEST(c.node_timeout.count() == 40);
    BOOST_TEST(c.connect_timeout.count() == 2000);
    BOOST_TEST(c.health_check_interval.count() == 0);
    BOOST_TEST(c.client_name == "worker-7");
    BOOST_TEST(c.restart_quarantine == false);
    BOOST_TEST(c.identify_holder == false);
    BOOST_TEST(c.retry.min_delay.count() == 10);
    BOOST_TEST(c.retry.max_delay.count() == 20);
    BOOST_TEST(c.tls.ca_file == "/ca.pem");
    BOOST_TEST(c.tls.cert_file == "/c.pem");
    BOOST_TEST(c.tls.key_file == "/k.pem");
    BOOST_TEST(c.tls.server_name == "redis.local");
    BOOST_TEST(c.max_queued_requests == 500u);
    BOOST_TEST(c.max_subscriptions == 7u);
    BOOST_TEST(c.tls.verify == false);
}

BOOST_AUTO_TEST_CASE(only_nodes_keeps_the_defaults) {
    auto c = parse_ok(R"({"nodes": ["redis://localhost"]})");
    const client_config defaults;
    BOOST_TEST(c.nodes.size() == 1u);
    BOOST_TEST(c.key_prefix == defaults.key_prefix);
    BOOST_TEST(c.max_ttl == defaults.max_ttl);
    BOOST_TEST(c.drift_factor == defaults.drift_factor);
    BOOST_TEST(c.node_timeout == defaults.node_timeout);
    BOOST_TEST(c.connect_timeout == defaults.connect_timeout);
    BOOST_TEST(c.health_check_interval == defaults.health_check_interval);
    BOOST_TEST(c.client_name == defaults.client_name);
    BOOST_TEST(c.restart_quarantine == true);
    BOOST_TEST(c.identify_holder == true);
    BOOST_TEST(c.retry.min_delay == defaults.retry.min_delay);
    BOOST_TEST(c.retry.max_delay == defaults.retry.max_delay);
    BOOST_TEST(c.tls.verify == true);
    BOOST_TEST(c.tls.ca_file.empty());
    // Partial sub-objects keep the defaults of the keys they leave out.
    auto partial = parse_ok(with_node(R"("retry": {"max_delay_ms": 500}, "tls": {"ca_file": "/ca"})"));
    BOOST_TEST(partial.retry.min_delay == defaults.retry.min_delay);
    BOOST_TEST(partial.retry.max_delay.count() == 500);
    BOOST_TEST(partial.tls.verify == true);
}

BOOST_AUTO_TEST_CASE(nodes_are_required_and_must_be_a_non_empty_array_of_uris) {
    BOOST_TEST(contains(parse_fail(R"({"key_prefix": "x"})"), "nodes: required key is missing"));
    BOOST_TEST(contains(parse_fail(R"({"nodes": []})"), "nodes: at least one node is required"));
    BOOST_TEST(contains(parse_fail(R"({"nodes": "redis://h"})"),
                        "nodes: expected an array of URI strings, got string"));
    BOOST_TEST(contains(parse_fail(R"({"nodes": ["redis://a", 7]})"),
                        "nodes[1]: expected a URI string or an object, got 7"));
    BOOST_TEST(contains(parse_fail(R"({"nodes": ["redis://a", null]})"),
                        "nodes[1]: expected a URI string or an object, got null"));
}

BOOST_AUTO_TEST_CASE(unknown_keys_are_named_with_their_path) {
    auto top = parse_fail(with_node(R"("max_ttl": 1000)"));
    BOOST_TEST(contains(top, "unknown key \"max_ttl\""));
    // The message lists what was expected, since a typo is the usual cause.
    BOOST_TEST(contains(top, "max_ttl_ms"));
    BOOST_TEST(
        contains(parse_fail(with_node(R"("retry": {"foo": 1})")),
                 "client_config: unknown key \"retry.foo\" (expected one of: min_delay_ms, max_delay_ms)"));
    BOOST_TEST(
        contains(parse_fail(with_node(R"("tls": {"verify": true, "ca": "/x"})")), "unknown key \"tls.ca\""));
    BOOST_TEST(contains(parse_fail(with_node(R"("tls": {"cert_file": "/c.pem"})")),
                        "cert_file and key_file go together"));
    BOOST_TEST(contains(parse_fail(with_node(R"("max_queued_requests": -1)")),
                        "max_queued_requests: expected a non-negative integer, got -1"));
}

BOOST_AUTO_TEST_CASE(wrong_types_name_the_key_what_was_expected_and_what_was_found) {
    BOOST_TEST(parse_fail(with_node(R"("retry": {"min_delay_ms": "10"})")) ==
               "client_config: retry.min_delay_ms: expected a non-negative integer, got string");
    BOOST_TEST(contains(parse_fail(with_node(R"("max_ttl_ms": null)")),
                        "max_ttl_ms: expected a positive integer, got null"));
    BOOST_TEST(contains(parse_fail(with_node(R"("key_prefix": 5)")), "key_prefix: expected a string, got 5"));
    BOOST_TEST(contains(parse_fail(with_node(R"("client_name": ["a"])")),
                        "client_name: expected a string, got array"));
    BOOST_TEST(contains(parse_fail(with_node(R"("restart_quarantine": 1)")),
                        "restart_quarantine: expected true or false, got 1"));
    BOOST_TEST(contains(parse_fail(with_node(R"("tls": {"verify": "yes"})")),
                        "tls.verify: expected true or false, got string"));
    BOOST_TEST(contains(parse_fail(with_node(R"("tls": {"ca_file": false})")),
                        "tls.ca_file: expected a string, got boolean"));
    BOOST_TEST(contains(parse_fail(with_node(R"("retry": [1, 2])")), "retry: expected an object, got array"));
    BOOST_TEST(contains(parse_fail(with_node(R"("tls": true)")), "tls: expected an object, got boolean"));
}

BOOST_AUTO_TEST_CASE(floats_are_not_integers_even_when_integral) {
    BOOST_TEST(contains(parse_fail(with_node(R"("max_ttl_ms": 1.5)")),
                        "max_ttl_ms: expected a positive integer, got 1.5"));
    BOOST_TEST(contains(parse_fail(with_node(R"("node_timeout_ms": 50.0)")),
                        "node_timeout_ms: expected a positive integer"));
    BOOST_TEST(contains(parse_fail(with_node(R"("connect_timeout_ms": 1e3)")),
                        "connect_timeout_ms: expected a positive integer"));
    BOOST_TEST(contains(parse_fail(with_node(R"("retry": {"max_delay_ms": 0.5})")),
                        "retry.max_delay_ms: expected a non-negative integer, got 0.5"));
}

BOOST_AUTO_TEST_CASE(negative_and_zero_durations) {
    BOOST_TEST(contains(parse_fail(with_node(R"("max_ttl_ms": -1)")),
                        "max_ttl_ms: expected a positive integer, got -1"));
    BOOST_TEST(contains(parse_fail(with_node(R"("retry": {"min_delay_ms": -5})")),
                        "retry.min_delay_ms: expected a non-negative integer, got -5"));
    // Zero is no timeout at all, but a valid retry delay.
    BOOST_TEST(contains(parse_fail(with_node(R"("node_timeout_ms": 0)")),
                        "node_timeout_ms: expected a positive integer, got 0"));
    BOOST_TEST(contains(parse_fail(with_node(R"("connect_timeout_ms": 0)")),
                        "connect_timeout_ms: expected a positive integer, got 0"));
    BOOST_TEST(contains(parse_fail(with_node(R"("health_check_interval_ms": -1)")),
                        "health_check_interval_ms: expected a non-negative integer, got -1"));
    auto c = parse_ok(with_node(R"("retry": {"min_delay_ms": 0, "max_delay_ms": 0})"));
    BOOST_TEST(c.retry.min_delay.count() == 0);
    BOOST_TEST(c.retry.max_delay.count() == 0);
}

BOOST_AUTO_TEST_CASE(booleans_are_not_integers) {
    BOOST_TEST(contains(parse_fail(with_node(R"("max_ttl_ms": true)")),
                        "max_ttl_ms: expected a positive integer, got boolean"));
    BOOST_TEST(contains(parse_fail(with_node(R"("retry": {"min_delay_ms": false})")),
                        "retry.min_delay_ms: expected a non-negative integer, got boolean"));
    BOOST_TEST(contains(parse_fail(with_node(R"("drift_factor": false)")),
                        "drift_factor: expected a number in [0, 0.5), got boolean"));
}

BOOST_AUTO_TEST_CASE(values_that_overflow_the_clock_are_out_of_range) {
    // The largest that fits: nanoseconds::max() in milliseconds.
    constexpr auto max_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::nanoseconds::max()).count();
    auto c = parse_ok(with_node(R"("max_ttl_ms": )" + std::to_string(max_ms)));
    BOOST_TEST(c.max_ttl.count() == max_ms);
    for (std::string big :
         {std::to_string(max_ms + 1), std::string("9223372036854775807"), std::string("18446744073709551615"),
          std::string("123456789012345678901234567890")}) {
        auto why = parse_fail(with_node(R"("max_ttl_ms": )" + big));
        BOOST_TEST_INFO("value " << big);
        BOOST_TEST(contains(why, "max_ttl_ms: "));
        BOOST_TEST(contains(why, "is out of range"));
    }
    BOOST_TEST(contains(parse_fail(with_node(R"("retry": {"max_delay_ms": 18446744073709551615})")),
                        "retry.max_delay_ms: 18446744073709551615 is out of range"));
}

BOOST_AUTO_TEST_CASE(drift_factor_must_be_in_zero_to_one_half) {
    BOOST_TEST(parse_ok(with_node(R"("drift_factor": 0)")).drift_factor == 0.0);
    BOOST_TEST(parse_ok(with_node(R"("drift_factor": 0.49)")).drift_factor == 0.49);
    BOOST_TEST(contains(parse_fail(with_node(R"("drift_factor": 0.5)")),
                        "drift_factor: expected a number in [0, 0.5), got 0.5"));
    BOOST_TEST(contains(parse_fail(with_node(R"("drift_factor": -0.01)")),
                        "drift_factor: expected a number in [0, 0.5), got -0.01"));
    BOOST_TEST(contains(parse_fail(with_node(R"("drift_factor": 1)")),
                        "drift_factor: expected a number in [0, 0.5), got 1"));
    BOOST_TEST(contains(parse_fail(with_node(R"("drift_factor": "0.1")")),
                        "drift_factor: expected a number in [0, 0.5), got string"));
}

BOOST_AUTO_TEST_CASE(retry_min_delay_above_max_delay) {
    auto why = parse_fail(with_node(R"("retry": {"min_delay_ms": 300, "max_delay_ms": 200})"));
    BOOST_TEST(why == "client_config: retry: min_delay_ms (300) is greater than max_delay_ms (200)");
    // Against the default max_delay of 250 ms as well.
    BOOST_TEST(contains(parse_fail(with_node(R"("retry": {"min_delay_ms": 251})")),
                        "min_delay_ms (251) is greater than max_delay_ms (250)"));
    BOOST_TEST(parse_ok(with_node(R"("retry": {"min_delay_ms": 250})")).retry.min_delay.count() == 250);
}

BOOST_AUTO_TEST_CASE(the_top_level_must_be_an_object) {
    BOOST_TEST(
        contains(parse_fail(R"(["redis://h"])"), "expected a JSON object at the top level, got array"));
    BOOST_TEST(contains(parse_fail(R"("redis://h")"), "expected a JSON object at the top level, got string"));
    BOOST_TEST(contains(parse_fail("null"), "expected a JSON object at the top level, got null"));
    BOOST_TEST(contains(parse_fail("42"), "expected a JSON object at the top level, got 42"));
}

BOOST_AUTO_TEST_CASE(invalid_json_reports_where) {
    auto why = parse_fail(R"({"nodes": ["redis://h"],})");
    BOOST_TEST(contains(why, "client_config: not valid JSON: line 1, column 25 (byte 25): syntax error"));
    // nlohmann's internal exception id is left out.
    BOOST_TEST(!contains(why, "json.exception"));
    BOOST_TEST(contains(parse_fail(""), "not valid JSON"));
    BOOST_TEST(contains(parse_fail(R"({"nodes": ["redis://h"]} trailing)"), "not valid JSON"));
    BOOST_TEST(contains(parse_fail("{\"nodes\": [\"redis://h\xff\"]}"), "not valid JSON"));
}

BOOST_AUTO_TEST_CASE(a_repeated_key_is_an_error_not_the_last_one_wins) {
    BOOST_TEST(contains(parse_fail(with_node(R"("max_ttl_ms": 1000, "max_ttl_ms": 2000)")),
                        "duplicate key \"max_ttl_ms\""));
    BOOST_TEST(contains(parse_fail(with_node(R"("retry": {"min_delay_ms": 1, "min_delay_ms": 2})")),
                        "duplicate key \"retry.min_delay_ms\""));
    // Paths through arrays name the element (the config has no objects in arrays, but the
    // finder runs before the type checks).
    BOOST_TEST(contains(parse_fail(R"({"nodes": ["redis://a", {"x": 1, "x": 2}]})"),
                        "duplicate key \"nodes[1].x\""));
    // The same key in two different objects is fine.
    auto c = parse_ok(with_node(R"("retry": {"min_delay_ms": 1}, "tls": {"ca_file": "x"})"));
    BOOST_TEST(c.retry.min_delay.count() == 1);
}

BOOST_AUTO_TEST_CASE(a_bad_node_uri_names_its_index) {
    auto why = parse_fail(R"({"nodes": ["redis://a:1", "redis://b:2", "http://c:3"]})", error::invalid_uri);
    BOOST_TEST(contains(why, "client_config: nodes[2]: "));
    // parse_node_uri's own explanation follows.
    BOOST_TEST(contains(why, "unknown scheme 'http'"));
    BOOST_TEST(contains(parse_fail(R"({"nodes": ["redis://a:99999"]})", error::invalid_uri), "nodes[0]: "));
    // The password stays masked in the message.
    auto masked = parse_fail(R"({"nodes": ["redis://:secret@a:0"]})", error::invalid_uri);
    BOOST_TEST(!contains(masked, "secret"));
}

BOOST_AUTO_TEST_CASE(cluster_nodes_are_taken_and_share_no_server) {
    std::string why;
    boost::system::error_code ec;
    auto c = client_config::from_json(
        R"({"nodes": ["redis-cluster://h1:7000,h2:7001", "rediss-cluster://:pw@h3:7000", "redis://h4:1"]})",
        ec, why);
    BOOST_TEST(!ec, why);
    BOOST_TEST(c.nodes.size() == 3u);
    // Redlock over two clusters that share a server would let that server vote twice.
    BOOST_TEST(contains(
        parse_fail(R"({"nodes": ["redis-cluster://h1:7000,h2:7001", "redis-cluster://h3:1,h2:7001"]})"),
        "nodes[1] is the same node as nodes[0] (both name redis://h2:7001): it would vote twice"));
    BOOST_TEST(contains(parse_fail(R"({"nodes": ["redis://h2:7001", "redis-cluster://h3:1,h2:7001"]})"),
                        "nodes[1] is the same node as nodes[0]"));
    BOOST_TEST(
        contains(parse_fail(R"({"nodes": ["redis-cluster://h1:7000/1"]})", error::invalid_uri),
                 "nodes[0]: invalid node URI 'redis-cluster://h1:7000/1': a cluster has only database 0"));
}

BOOST_AUTO_TEST_CASE(sentinel_nodes_are_voters_per_master_name) {
    std::string why;
    boost::system::error_code ec;
    // One set of sentinels watching two masters: two voters.
    auto c = client_config::from_json(
        R"({"nodes": ["redis-sentinel://s1:26379,s2:26379#a", "redis-sentinel://s2:26379#b"]})", ec, why);
    BOOST_TEST(!ec, why);
    BOOST_TEST(c.nodes.size() == 2u);
    BOOST_TEST(contains(
        parse_fail(R"({"nodes": ["redis-sentinel://s1:26379#a", "redis-sentinel://s2:1,s1:26379#a"]})"),
        "nodes[1] is the same node as nodes[0] (both name redis://s1:26379): it would vote twice"));
}

BOOST_AUTO_TEST_CASE(a_node_object_says_what_its_uri_cannot) {
    std::string why;
    boost::system::error_code ec;
    auto c = client_config::from_json(R"({"nodes": [
        "redis://h1:1",
        {"uri": "redis-sentinel://s1:26379,s2:26379#m", "sentinel_username": "watcher", "sentinel_password": "spw"},
        {"uri": "rediss://h3:6380", "tls": {"ca_file": "/ca.pem", "server_name": "h3.example"}}]})",
                                      ec, why);
    BOOST_TEST_REQUIRE(!ec, why);
    BOOST_TEST(c.nodes == (std::vector<std::string>{"redis://h1:1", "redis-sentinel://s1:26379,s2:26379#m",
                                                    "rediss://h3:6380"}));
    BOOST_TEST_REQUIRE(c.per_node.size() == 3u);
    BOOST_TEST(c.per_node[0].sentinel_password.empty());
    BOOST_TEST(!c.per_node[0].tls.has_value());
    BOOST_TEST(c.per_node[1].sentinel_username == "watcher");
    BOOST_TEST(c.per_node[1].sentinel_password == "spw");
    BOOST_TEST_REQUIRE(c.per_node[2].tls.has_value());
    BOOST_TEST(c.per_node[2].tls->ca_file == "/ca.pem");
    BOOST_TEST(c.per_node[2].tls->server_name == "h3.example");
    // Strings only: no per-node settings at all.
    BOOST_TEST(client_config::from_json(R"({"nodes": ["redis://h1:1"]})").per_node.empty());

    BOOST_TEST(contains(parse_fail(R"({"nodes": [{"sentinel_password": "x"}]})"),
                        "nodes[0].uri: required key is missing"));
    BOOST_TEST(contains(parse_fail(R"({"nodes": [{"uri": "redis://h:1", "password": "x"}]})"), "nodes[0]"));
    BOOST_TEST(
        contains(parse_fail(R"({"nodes": [7]})"), "nodes[0]: expected a URI string or an object, got"));
    BOOST_TEST(contains(parse_fail(R"({"nodes": [{"uri": "redis://h:1", "sentinel_password": "x"}]})"),
                        "nodes[0]: sentinel credentials for a node that is not redis-sentinel://"));
    BOOST_TEST(contains(parse_fail(R"({"nodes": [{"uri": "rediss://h:1", "tls": {"cert_file": "/c.pem"}}]})"),
                        "nodes[0].tls: cert_file and key_file go together"));
    BOOST_TEST(contains(parse_fail(R"({"nodes": [{"uri": "rediss://h:1", "tls": {"verify": "yes"}}]})"),
                        "nodes[0].tls.verify"));
    // Built by hand: none, or one per node.
    client_config hand;
    hand.nodes = {"redis://a:1", "redis://b:1"};
    hand.per_node.resize(1);
    BOOST_TEST((hand.validate(why) == redlock::error::invalid_config));
    BOOST_TEST(contains(why, "per_node: 1 entries for 2 nodes"), why);
}

BOOST_AUTO_TEST_CASE(the_same_node_twice_would_vote_twice) {
    auto why = parse_fail(
        R"({"nodes": ["redis://a:7001", "redis://b:7001", "redis://a:7002", "redis://:pw@a:7002"]})");
    BOOST_TEST(why == "client_config: nodes[3] is the same node as nodes[2]: it would vote twice");
    // The default port, host case, database, user and transport do not make another server.
    BOOST_TEST(contains(parse_fail(R"({"nodes": ["redis://h", "redis://h:6379"]})"),
                        "nodes[1] is the same node as nodes[0]"));
    BOOST_TEST(contains(parse_fail(R"({"nodes": ["redis://Host:1", "redis://hOST:1"]})"),
                        "nodes[1] is the same node as nodes[0]"));
    BOOST_TEST(contains(parse_fail(R"({"nodes": ["redis://h:1/0", "redis://h:1/1"]})"),
                        "nodes[1] is the same node as nodes[0]"));
    BOOST_TEST(contains(parse_fail(R"({"nodes": ["redis://u:p@h:1", "redis://v:q@h:1"]})"),
                        "nodes[1] is the same node as nodes[0]"));
    BOOST_TEST(contains(parse_fail(R"({"nodes": ["redis://h:1", "rediss://h:1"]})"),
                        "nodes[1] is the same node as nodes[0]"));
    BOOST_TEST(contains(parse_fail(R"({"nodes": ["redis://[::1]:1", "redis://[0:0::1]:1"]})"),
                        "nodes[1] is the same node as nodes[0]"));
    BOOST_TEST(contains(parse_fail(R"({"nodes": ["unix:///s.sock", "unix:///s.sock?db=2"]})"),
                        "nodes[1] is the same node as nodes[0]"));
    // Different ports, hosts or socket paths are different nodes.
    auto c =
        parse_ok(R"({"nodes": ["redis://h:1", "redis://h:2", "redis://g:1", "unix:///a", "unix:///b"]})");
    BOOST_TEST(c.nodes.size() == 5u);
}

BOOST_AUTO_TEST_CASE(client_name_must_be_acceptable_to_client_setname) {
    BOOST_TEST(contains(parse_fail(with_node(R"("client_name": "my app")")),
                        "client_name: \"my app\" contains a space"));
    BOOST_TEST(contains(parse_fail(with_node(R"("client_name": "a\nb")")), "client_name: "));
    // Empty means "no CLIENT SETNAME".
    BOOST_TEST(parse_ok(with_node(R"("client_name": "")")).client_name.empty());
}

BOOST_AUTO_TEST_CASE(the_throwing_overload_throws_system_error_with_code_and_message) {
    try {
        (void)client_config::from_json(with_node(R"("retry": {"foo": 1})"));
        BOOST_FAIL("no exception");
    } catch (const boost::system::system_error& e) {
        BOOST_TEST((e.code() == error::invalid_config));
        BOOST_TEST(contains(
            e.what(),
            "client_config: unknown key \"retry.foo\" (expected one of: min_delay_ms, max_delay_ms)"));
    }
    try {
        (void)client_config::from_json(R"({"nodes": ["nope"]})");
        BOOST_FAIL("no exception");
    } catch (const boost::system::system_error& e) {
        BOOST_TEST((e.code() == error::invalid_uri));
        BOOST_TEST(contains(e.what(), "nodes[0]"));
    }
    BOOST_TEST(client_config::from_json(R"({"nodes": ["redis://h"]})").nodes.size() == 1u);
}

BOOST_AUTO_TEST_CASE(from_file_reads_and_parses) {
    temp_file file(R"({"nodes": ["redis://127.0.0.1:7001", "redis://127.0.0.1:7002"], "max_ttl_ms": 5000})");
    boost::system::error_code ec;
    std::string why;
    auto c = client_config::from_file(file.path, ec, why);
    BOOST_TEST(!ec);
    BOOST_TEST(c.nodes.size() == 2u);
    BOOST_TEST(c.max_ttl.count() == 5000);
    BOOST_TEST(client_config::from_file(file.path).max_ttl.count() == 5000);

    // A parse error names the key and the file.
    temp_file bad(R"({"nodes": ["redis://h"], "drift_factor": 2})");
    (void)client_config::from_file(bad.path, ec, why);
    BOOST_TEST((ec == error::invalid_config));
    BOOST_TEST(contains(why, "client_config: drift_factor: "));
    BOOST_TEST(contains(why, bad.path));
}

BOOST_AUTO_TEST_CASE(from_file_on_a_missing_file_or_a_directory) {
    const std::string missing = "/nonexistent/redlock/config.json";
    boost::system::error_code ec;
    std::string why;
    auto c = client_config::from_file(missing, ec, why);
    BOOST_TEST((ec == error::invalid_config));
    BOOST_TEST(why == "client_config: cannot read " + missing + ": No such file or directory");
    BOOST_TEST(c.nodes.empty());
    BOOST_CHECK_EXCEPTION((void)client_config::from_file(missing), boost::system::system_error,
                          [](const boost::system::system_error& e) {
                              return e.code() == error::invalid_config && contains(e.what(), "cannot read");
                          });

    // A directory opens, but reading it fails.
    const std::string dir = std::filesystem::temp_directory_path().string();
    (void)client_config::from_file(dir, ec, why);
    BOOST_TEST((ec == error::invalid_config));
    BOOST_TEST(contains(why, "client_config: cannot read " + dir));
}

BOOST_AUTO_TEST_CASE(validate_a_hand_built_config) {
    std::string why;
    BOOST_TEST(!valid_config().validate(why));
    BOOST_TEST(why.empty());

    auto check = [](const client_config& c, error expected, std::string_view part) {
        std::string message;
        auto ec = c.validate(message);
        BOOST_TEST_INFO("expected: " << part << " got: " << message);
        BOOST_TEST((ec == expected));
        BOOST_TEST(message.rfind("client_config: ", 0) == 0);
        BOOST_TEST(contains(message, part));
    };
    check(client_config{}, error::invalid_config, "nodes: at least one node is required");

    auto c = valid_config();
    c.nodes[1] = "redis//oops";
    check(c, error::invalid_uri, "nodes[1]: invalid node URI");

    c = valid_config();
    c.nodes.push_back("redis://127.0.0.1:7002");
    check(c, error::invalid_config, "nodes[3] is the same node as nodes[1]: it would vote twice");

    c = valid_config();
    c.max_ttl = 0ms;
    check(c, error::invalid_config, "max_ttl_ms: must be positive, got 0 ms");
    c = valid_config();
    c.node_timeout = -5ms;
    check(c, error::invalid_config, "node_timeout_ms: must be positive, got -5 ms");
    c = valid_config();
    c.connect_timeout = std::chrono::milliseconds::max();
    check(c, error::invalid_config, "connect_timeout_ms: 9223372036854775807 ms is out of range");
    c = valid_config();
    c.retry.min_delay = -1ms;
    check(c, error::invalid_config, "retry.min_delay_ms: must not be negative, got -1 ms");
    c = valid_config();
    c.retry.min_delay = 10ms;
    c.retry.max_delay = 5ms;
    check(c, error::invalid_config, "retry: min_delay_ms (10) is greater than max_delay_ms (5)");

    c = valid_config();
    c.drift_factor = std::nan("");
    check(c, error::invalid_config, "drift_factor: expected a number in [0, 0.5), got NaN");
    c.drift_factor = std::numeric_limits<double>::infinity();
    check(c, error::invalid_config, "got inf");
    c.drift_factor = 0.5;
    check(c, error::invalid_config, "got 0.5");

    c = valid_config();
    c.client_name = "caf\xc3\xa9";
    check(c, error::invalid_config, "client_name: ");
}

BOOST_AUTO_TEST_SUITE_END()
