// SPDX-License-Identifier: BSL-1.0
// CLUSTER SHARDS read into a slot map (cluster_shards): each shard's master serves its slots, as
// RESP3 maps or RESP2 arrays; replicas, unknown fields and slotless shards are passed over.
#include "redis/cluster_shards.hpp"

#include "support/resp_values.hpp"
#include <redlock/error.hpp>

#include <boost/test/unit_test.hpp>

#include <string>
#include <utility>
#include <vector>

using namespace redlock;
using redis::detail::read_cluster_shards;
using redis::detail::slot_map;
using test::bulk_reply;
using test::error_reply;
using test::integer_reply;

namespace {

resp::value of_kind(resp::type kind, std::vector<resp::value> elements) {
    resp::value v;
    v.kind = kind;
    v.elements = std::move(elements);
    return v;
}

resp::value array_of(std::vector<resp::value> elements) {
    return of_kind(resp::type::array, std::move(elements));
}

// A node's fields as CLUSTER SHARDS gives them (Redis 7.0), in `kind` (map: RESP3).
resp::value node(resp::type kind, std::string role, std::string endpoint, std::int64_t port,
                 std::int64_t tls_port = 0) {
    std::vector<resp::value> fields = {bulk_reply("id"),
                                       bulk_reply("e10b7051d6bf2d5febd39a2be297bbaea6084111")};
    if (port != 0) fields.insert(fields.end(), {bulk_reply("port"), integer_reply(port)});
    if (tls_port != 0) fields.insert(fields.end(), {bulk_reply("tls-port"), integer_reply(tls_port)});
    fields.insert(fields.end(), {bulk_reply("ip"), bulk_reply("10.9.9.9"), bulk_reply("endpoint"),
                                 bulk_reply(std::move(endpoint)), bulk_reply("role"),
                                 bulk_reply(std::move(role)), bulk_reply("replication-offset"),
                                 integer_reply(72156), bulk_reply("health"), bulk_reply("online")});
    return of_kind(kind, std::move(fields));
}

resp::value shard(resp::type kind, std::vector<std::int64_t> slots, std::vector<resp::value> nodes) {
    std::vector<resp::value> ranges;
    for (const auto s : slots)
        ranges.push_back(integer_reply(s));
    return of_kind(kind, {bulk_reply("slots"), array_of(std::move(ranges)), bulk_reply("nodes"),
                          array_of(std::move(nodes))});
}

redis::node_address asked_node(redis::node_address::transport kind = redis::node_address::transport::tcp) {
    redis::node_address a;
    a.host = "10.0.0.1";
    a.port = 7000;
    a.password = "pw";
    a.kind = kind;
    return a;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(cluster_shards_test)

BOOST_AUTO_TEST_CASE(each_shards_master_serves_its_slots_in_resp3_and_resp2) {
    for (const auto kind : {resp::type::map, resp::type::array}) {
        const auto reply = array_of({
            shard(kind, {0, 99, 200, 5460},
                  {node(kind, "replica", "10.0.0.4", 7004), node(kind, "master", "10.0.0.1", 7000)}),
            shard(kind, {100, 199, 5461, 10922}, {node(kind, "master", "", 7001)}),
            shard(kind, {10923, 16383},
                  {node(kind, "master", "?", 7002), node(kind, "replica", "10.0.0.5", 7005)}),
            // A master without slots (just added) serves nothing and is no master of the map.
            shard(kind, {}, {node(kind, "master", "10.0.0.8", 7008)}),
        });
        slot_map map;
        std::string why;
        BOOST_TEST(!read_cluster_shards(reply, asked_node(), map, why), why);
        BOOST_TEST(map.unserved() == 0u);
        BOOST_REQUIRE(map.masters().size() == 3u);
        BOOST_TEST(*map.master_of(0) == 0u);
        BOOST_TEST(*map.master_of(150) == 1u);
        BOOST_TEST(*map.master_of(5460) == 0u);
        BOOST_TEST(*map.master_of(10922) == 1u);
        BOOST_TEST(*map.master_of(16383) == 2u);
        // An endpoint the server does not know is the asked node's host; every master logs in as
        // the asked node did.
        BOOST_TEST(map.masters()[1].host == "10.0.0.1");
        BOOST_TEST(map.masters()[1].port == 7001);
        BOOST_TEST(map.masters()[2].host == "10.0.0.1");
        for (const auto& m : map.masters())
            BOOST_TEST(m.password == "pw");
    }
}

BOOST_AUTO_TEST_CASE(a_tls_connection_takes_the_tls_port) {
    const auto reply = array_of(
        {shard(resp::type::map, {0, 16383}, {node(resp::type::map, "master", "10.0.0.2", 7000, 8000)})});
    slot_map map;
    std::string why;
    BOOST_TEST_REQUIRE(
        !read_cluster_shards(reply, asked_node(redis::node_address::transport::tls), map, why));
    BOOST_TEST(map.masters().front().port == 8000);
    BOOST_TEST(!read_cluster_shards(reply, asked_node(), map, why));
    BOOST_TEST(map.masters().front().port == 7000);
    // A TLS-only node (port 0, so no "port"), reached over TLS.
    const auto tls_only = array_of(
        {shard(resp::type::map, {0, 16383}, {node(resp::type::map, "master", "10.0.0.2", 0, 8000)})});
    BOOST_TEST(!read_cluster_shards(tls_only, asked_node(redis::node_address::transport::tls), map, why));
    BOOST_TEST(map.masters().front().port == 8000);
}

BOOST_AUTO_TEST_CASE(a_shard_without_a_master_leaves_its_slots_unserved) {
    const auto reply =
        array_of({shard(resp::type::map, {0, 99}, {node(resp::type::map, "master", "10.0.0.1", 7000)}),
                  shard(resp::type::map, {100, 16383}, {node(resp::type::map, "replica", "h", 7001)})});
    slot_map map;
    std::string why;
    BOOST_TEST(!read_cluster_shards(reply, asked_node(), map, why));
    BOOST_TEST(map.masters().size() == 1u);
    BOOST_TEST(map.unserved() == 16384u - 100u);
    BOOST_TEST(!map.master_of(100).has_value());
}

BOOST_AUTO_TEST_CASE(the_address_map_applies_to_each_master) {
    const auto reply = array_of(
        {shard(resp::type::map, {0, 16383}, {node(resp::type::map, "master", "redis.invalid", 7000)})});
    redis::detail::address_map remap;
    std::string why;
    BOOST_TEST_REQUIRE(!redis::detail::address_map::parse({{"redis.invalid", "127.0.0.1"}}, remap, why), why);
    slot_map map;
    BOOST_TEST(!read_cluster_shards(reply, asked_node(), map, why, remap));
    BOOST_TEST(map.masters().front().host == "127.0.0.1");
    BOOST_TEST(map.masters().front().port == 7000);
}

BOOST_AUTO_TEST_CASE(malformed_cluster_shards_replies_are_unexpected) {
    const auto m = resp::type::map;
    const std::vector<resp::value> bad = {
        error_reply("ERR unknown subcommand 'shards'. Try CLUSTER HELP."),
        bulk_reply("x"),
        array_of({bulk_reply("slots")}),
        array_of({of_kind(m, {bulk_reply("slots"), array_of({})})}),
        array_of({shard(m, {0}, {node(m, "master", "h", 1)})}),
        array_of({shard(m, {5, 4}, {node(m, "master", "h", 1)})}),
        array_of({shard(m, {0, 16384}, {node(m, "master", "h", 1)})}),
        array_of({shard(m, {0, 1}, {node(m, "master", "h", 0)})}),
        array_of({shard(m, {0, 1}, {node(m, "master", "h", 70000)})}),
        array_of({shard(m, {0, 1}, {bulk_reply("node")})}),
        array_of(
            {shard(m, {0, 1}, {of_kind(m, {bulk_reply("role"), bulk_reply("master"), bulk_reply("port")})})}),
        array_of({shard(m, {0, 1},
                        {of_kind(m, {bulk_reply("role"), bulk_reply("master"), bulk_reply("port"),
                                     integer_reply(7000)})})}),
    };
    for (const auto& reply : bad) {
        slot_map map;
        std::string why;
        BOOST_TEST((read_cluster_shards(reply, asked_node(), map, why) == error::unexpected_reply),
                   resp::to_string(reply));
        BOOST_TEST(why.rfind("CLUSTER SHARDS: ", 0) == 0u, why);
    }
}

BOOST_AUTO_TEST_SUITE_END()
