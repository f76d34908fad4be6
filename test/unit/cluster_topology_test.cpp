// SPDX-License-Identifier: BSL-1.0
// The pure pieces of following a cluster (cluster_topology): CLUSTER SLOTS read into a slot map,
// MOVED and ASK replies read, and a pipeline rewritten with ASKING before each command.
#include "redis/cluster_topology.hpp"

#include "resp/reply_parser.hpp"
#include "support/resp_values.hpp"
#include <redlock/error.hpp>

#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

using namespace redlock;
using redis::detail::asking_before_each;
using redis::detail::read_cluster_slots;
using redis::detail::read_redirect;
using redis::detail::slot_map;
using test::bulk_reply;
using test::integer_reply;
using test::text_of;

namespace {

resp::value array_of(std::vector<resp::value> elements) {
    resp::value v;
    v.kind = resp::type::array;
    v.elements = std::move(elements);
    return v;
}

resp::value range(std::int64_t first, std::int64_t last, std::string host, std::int64_t port) {
    return array_of({integer_reply(first), integer_reply(last),
                     array_of({bulk_reply(std::move(host)), integer_reply(port), bulk_reply("id")}),
                     array_of({bulk_reply("10.0.0.9"), integer_reply(7009), bulk_reply("replica-id")})});
}

redis::node_address asked_node() {
    redis::node_address a;
    a.host = "10.0.0.1";
    a.port = 7000;
    a.password = "pw";
    a.kind = redis::node_address::transport::tls;
    return a;
}

resp::value error_reply(std::string text) {
    return text_of(resp::type::error, std::move(text));
}

}  // namespace

BOOST_AUTO_TEST_SUITE(cluster_topology_test)

BOOST_AUTO_TEST_CASE(cluster_slots_map_every_slot_to_its_master) {
    slot_map map;
    std::string why;
    auto reply = array_of(
        {range(0, 5460, "10.0.0.1", 7000), range(5461, 10922, "", 7001), range(10923, 16383, "?", 7002)});
    BOOST_TEST(!read_cluster_slots(reply, asked_node(), map, why));
    BOOST_TEST(map.unserved() == 0u);
    BOOST_REQUIRE(map.masters().size() == 3u);
    BOOST_TEST(*map.master_of(0) == 0u);
    BOOST_TEST(*map.master_of(5460) == 0u);
    BOOST_TEST(*map.master_of(5461) == 1u);
    BOOST_TEST(*map.master_of(16383) == 2u);
    // An unknown endpoint is the asked node's host; every master logs in as the asked node did.
    BOOST_TEST(map.masters()[1].host == "10.0.0.1");
    BOOST_TEST(map.masters()[2].port == 7002);
    for (const auto& m : map.masters()) {
        BOOST_TEST(m.password == "pw");
        BOOST_TEST((m.kind == redis::node_address::transport::tls));
    }
}

BOOST_AUTO_TEST_CASE(a_partial_map_leaves_slots_unserved_and_a_moved_slot_moves) {
    slot_map map;
    std::string why;
    BOOST_TEST(
        !read_cluster_slots(array_of({range(0, 99, "10.0.0.1", 7000), range(200, 299, "10.0.0.1", 7000)}),
                            asked_node(), map, why));
    BOOST_TEST(map.masters().size() == 1u);
    BOOST_TEST(map.unserved() == 16384u - 200u);
    BOOST_TEST(!map.master_of(100).has_value());
    redis::node_address other = asked_node();
    other.port = 7005;
    map.assign(100, 100, other);
    BOOST_TEST(*map.master_of(100) == 1u);
    BOOST_TEST(map.master_at(other) == 1u);
    BOOST_TEST(map.masters().size() == 2u);
    BOOST_TEST(map.has_master(other));
    // A master that no longer serves a slot is not one.
    map.assign(0, 299, other);
    BOOST_TEST(!map.has_master(asked_node()));
    other.port = 7006;
    BOOST_TEST(!map.has_master(other));
}

BOOST_AUTO_TEST_CASE(malformed_cluster_slots_replies_are_unexpected) {
    const std::vector<resp::value> bad = {
        error_reply("ERR This instance has cluster support disabled"),
        bulk_reply("x"),
        array_of({array_of({integer_reply(0), integer_reply(1)})}),
        array_of({range(5, 4, "h", 1)}),
        array_of({range(0, 16384, "h", 1)}),
        array_of({range(0, 1, "h", 0)}),
        array_of({array_of({integer_reply(0), integer_reply(1), array_of({bulk_reply("h")})})}),
    };
    for (const auto& reply : bad) {
        slot_map map;
        std::string why;
        BOOST_TEST((read_cluster_slots(reply, asked_node(), map, why) == error::unexpected_reply));
        BOOST_TEST(why.rfind("CLUSTER SLOTS: ", 0) == 0u);
    }
}

BOOST_AUTO_TEST_CASE(moved_and_ask_replies_are_redirects) {
    auto moved = read_redirect(error_reply("MOVED 3999 127.0.0.1:6381"));
    BOOST_REQUIRE(moved.has_value());
    BOOST_TEST(!moved->ask);
    BOOST_TEST(moved->slot == 3999);
    BOOST_TEST(moved->host == "127.0.0.1");
    BOOST_TEST(moved->port == 6381);
    auto ask = read_redirect(error_reply("ASK 12 ::1:7002"));
    BOOST_REQUIRE(ask.has_value());
    BOOST_TEST(ask->ask);
    BOOST_TEST(ask->host == "::1");
    BOOST_TEST(ask->port == 7002);
    BOOST_TEST(read_redirect(error_reply("MOVED 1 :7003"))->host.empty());
    BOOST_TEST(read_redirect(error_reply("MOVED 1 [::1]:7003"))->host == "::1");

    for (auto text :
         {"MOVED", "MOVED 1", "MOVED x h:1", "MOVED 16384 h:1", "MOVED 1 h", "MOVED 1 h:0", "ASK 1 h:65536",
          "ERR MOVED 1 h:1", "TRYAGAIN Multiple keys request during rehashing"}) {
        BOOST_TEST_INFO(text);
        BOOST_TEST(!read_redirect(error_reply(text)).has_value());
    }
    BOOST_TEST(!read_redirect(bulk_reply("MOVED 1 h:1")).has_value());
}

BOOST_AUTO_TEST_CASE(asking_goes_before_each_command) {
    resp::request pipeline;
    pipeline.push("SET", "{r}:lock", std::string("a\r\nb", 4), "NX", "PX", 100, "GET");
    pipeline.push("PTTL", "{r}:lock");
    auto rewritten = asking_before_each(pipeline.payload());
    BOOST_REQUIRE(rewritten.has_value());
    resp::request expected;
    expected.push("ASKING");
    expected.push("SET", "{r}:lock", std::string("a\r\nb", 4), "NX", "PX", 100, "GET");
    expected.push("ASKING");
    expected.push("PTTL", "{r}:lock");
    BOOST_TEST(rewritten->payload() == expected.payload());
    BOOST_TEST(rewritten->size() == 4u);

    BOOST_TEST(!asking_before_each("*1\r\n$3\r\nGE").has_value());
    BOOST_TEST(!asking_before_each(":1\r\n").has_value());
}

namespace {

slot_map map_of(std::vector<resp::value> ranges) {
    slot_map map;
    std::string why;
    BOOST_TEST_REQUIRE(!read_cluster_slots(array_of(std::move(ranges)), asked_node(), map, why), why);
    return map;
}

std::vector<std::uint16_t> ports_of(const std::vector<redis::node_address>& masters) {
    std::vector<std::uint16_t> ports;
    for (const auto& m : masters)
        ports.push_back(m.port);
    return ports;
}

}  // namespace

// A client that sees a switch quarantines the new master. A map read during a failover, or
// from a lagging node, may lack a master or be empty: the next whole map then names nobody new
// but the promoted replica. A demoted master that comes back is new.
BOOST_AUTO_TEST_CASE(a_partial_map_makes_nobody_new_and_a_promoted_replica_is_new) {
    using redis::detail::master_reference;
    const auto whole = map_of({range(0, 5460, "10.0.0.1", 7000), range(5461, 10922, "10.0.0.1", 7001),
                               range(10923, 16383, "10.0.0.1", 7002)});
    const auto partial = map_of({range(0, 5460, "10.0.0.1", 7000), range(5461, 10922, "10.0.0.1", 7001)});
    const auto promoted = map_of({range(0, 5460, "10.0.0.1", 7000), range(5461, 10922, "10.0.0.1", 7001),
                                  range(10923, 16383, "10.0.0.1", 7005)});
    const slot_map empty;
    master_reference reference;
    BOOST_TEST(reference.on_map(whole, empty).empty());  // the first map: nobody is new
    BOOST_TEST(reference.on_map(partial, whole).empty());
    BOOST_TEST(reference.on_map(empty, partial).empty());
    BOOST_TEST(reference.on_map(whole, empty).empty());  // 7002 was in the reference
    BOOST_TEST(reference.knows(whole.masters()[2], partial));
    BOOST_TEST((ports_of(reference.on_map(promoted, whole)) == std::vector<std::uint16_t>{7005}));
    BOOST_TEST(!reference.knows(whole.masters()[2], promoted));  // 7002 left a whole map
    BOOST_TEST((ports_of(reference.on_map(whole, promoted)) == std::vector<std::uint16_t>{7002}));
}

BOOST_AUTO_TEST_SUITE_END()
