// SPDX-License-Identifier: BSL-1.0
// client_config::address_map as the cluster and Sentinel clients apply it to the addresses the
// servers announce (redis/address_map.hpp), and as a config file and validate() read it.
#include "redis/address_map.hpp"

#include "redis/cluster_topology.hpp"
#include <redlock/config.hpp>
#include <redlock/error.hpp>

#include <boost/test/unit_test.hpp>

using redlock::redis::node_address;
using redlock::redis::detail::address_map;

namespace {

address_map parsed(const std::map<std::string, std::string>& entries) {
    address_map m;
    std::string why;
    BOOST_TEST_REQUIRE(!address_map::parse(entries, m, why), why);
    return m;
}

node_address at(const std::string& host, unsigned short port) {
    node_address a;
    a.host = host;
    a.port = port;
    a.password = "pw";
    return a;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(address_map_test)

BOOST_AUTO_TEST_CASE(an_endpoint_entry_comes_before_a_host_entry_and_the_rest_is_kept) {
    const auto m = parsed({{"10.0.0.5:7000", "203.0.113.7:17000"},
                           {"10.0.0.5", "203.0.113.9"},
                           {"[fd00::1]:6379", "localhost:6380"}});
    const auto exact = m.apply(at("10.0.0.5", 7000));
    BOOST_TEST(exact.host == "203.0.113.7");
    BOOST_TEST(exact.port == 17000);
    BOOST_TEST(exact.password == "pw");
    const auto by_host = m.apply(at("10.0.0.5", 7001));
    BOOST_TEST(by_host.host == "203.0.113.9");
    BOOST_TEST(by_host.port == 7001);
    const auto v6 = m.apply(at("fd00::1", 6379));
    BOOST_TEST(v6.host == "localhost");
    BOOST_TEST(v6.port == 6380);
    const auto other = m.apply(at("10.0.0.6", 7000));
    BOOST_TEST(other.host == "10.0.0.6");
    BOOST_TEST(other.port == 7000);
}

BOOST_AUTO_TEST_CASE(bad_entries_are_refused_naming_them) {
    for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{{"", "a"},
                                                                                   {"a", ""},
                                                                                   {"a:0", "b:1"},
                                                                                   {"a:70000", "b"},
                                                                                   {"a:x", "b"},
                                                                                   {"a", "b:6379"},
                                                                                   {"a b", "c"},
                                                                                   {"[::1", "b"}}) {
        address_map m;
        std::string why;
        BOOST_TEST((address_map::parse({{from, to}}, m, why) == redlock::error::invalid_config),
                   from << " -> " << to);
        BOOST_TEST(why.find("address_map: \"" + from + "\"") != std::string::npos, why);
    }
}

BOOST_AUTO_TEST_CASE(cluster_slots_addresses_go_through_the_map) {
    // [[0, 16383, ["node-a.internal", 7000, "id"]]]
    redlock::resp::value id, host, port, master, first, last, range, reply;
    host.kind = redlock::resp::type::bulk_string;
    host.str = "node-a.internal";
    port.kind = redlock::resp::type::integer;
    port.integer = 7000;
    id.kind = redlock::resp::type::bulk_string;
    id.str = "id";
    master.kind = redlock::resp::type::array;
    master.elements = {host, port, id};
    first.kind = redlock::resp::type::integer;
    first.integer = 0;
    last.kind = redlock::resp::type::integer;
    last.integer = 16383;
    range.kind = redlock::resp::type::array;
    range.elements = {first, last, master};
    reply.kind = redlock::resp::type::array;
    reply.elements = {range};
    redlock::redis::detail::slot_map map;
    std::string why;
    BOOST_TEST_REQUIRE(!redlock::redis::detail::read_cluster_slots(
                           reply, at("seed", 1), map, why, parsed({{"node-a.internal", "127.0.0.1"}})),
                       why);
    BOOST_TEST_REQUIRE(map.masters().size() == 1u);
    BOOST_TEST(map.masters()[0].host == "127.0.0.1");
    BOOST_TEST(map.masters()[0].port == 7000);
}

BOOST_AUTO_TEST_CASE(a_config_file_reads_it_and_validate_checks_it) {
    const auto cfg = redlock::client_config::from_json(
        R"({"nodes": ["redis-cluster://127.0.0.1:7000"], "address_map": {"node-a.internal": "127.0.0.1"}})");
    BOOST_TEST(cfg.address_map.at("node-a.internal") == "127.0.0.1");
    BOOST_TEST(cfg.node_specs().at(0).address_map.size() == 1u);
    boost::system::error_code ec;
    std::string why;
    (void)redlock::client_config::from_json(R"({"nodes": ["redis://a:1"], "address_map": {"a": 5}})", ec,
                                            why);
    BOOST_TEST((ec == redlock::error::invalid_config));
    BOOST_TEST(why.find("address_map.a") != std::string::npos, why);
    (void)redlock::client_config::from_json(R"({"nodes": ["redis://a:1"], "address_map": {"a": "b:1"}})", ec,
                                            why);
    BOOST_TEST((ec == redlock::error::invalid_config));
    BOOST_TEST(why.find("address_map: \"a\"") != std::string::npos, why);
}

BOOST_AUTO_TEST_SUITE_END()
