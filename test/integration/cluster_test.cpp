// SPDX-License-Identifier: BSL-1.0
// Redis Cluster against a real cluster-mode redis-server: our key slots are the server's
// (CLUSTER KEYSLOT), and every key a resource's locks use is in one slot there.
#include "redis/cluster_slot.hpp"
#include "support/redis_server.hpp"
#include "support/resource_names.hpp"

#include <boost/test/unit_test.hpp>

#include <random>
#include <string>
#include <vector>

using redlock::redis::detail::key_slot;
using redlock::test::redis_server;
using redlock::test::redis_server_options;

namespace {

redis_server_options cluster_mode() {
    redis_server_options o;
    o.cluster = true;
    return o;
}

std::int64_t server_slot(const redis_server& server, const std::string& key) {
    const auto reply = server.command({"CLUSTER", "KEYSLOT", key});
    BOOST_REQUIRE_MESSAGE(reply.kind == redlock::resp::type::integer, "CLUSTER KEYSLOT " << key);
    return reply.integer;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(cluster_suite)

BOOST_AUTO_TEST_CASE(our_key_slots_are_the_servers) {
    redis_server server(cluster_mode());
    std::vector<std::string> keys = {
        "", "foo", "{user1000}.following", "foo{}{bar}", "foo{{bar}}zap", "foo{bar}{zap}", "}{", "{a}"};
    // Random keys, with braces and bytes above 0x7f among them.
    std::mt19937 rng(12345);
    const std::string alphabet = "ab{}:\x80\xff";
    for (int i = 0; i < 120; ++i) {
        std::string key;
        const auto length = 1 + rng() % 12;
        for (std::size_t j = 0; j < length; ++j)
            key += alphabet[rng() % alphabet.size()];
        keys.push_back(std::move(key));
    }
    for (const auto& key : keys)
        BOOST_TEST(key_slot(key) == server_slot(server, key), "key \"" << key << "\"");
}

BOOST_AUTO_TEST_CASE(a_resources_keys_share_one_slot_on_the_server) {
    redis_server server(cluster_mode());
    for (const std::string resource : {"orders:42", "a}b", "{x}", "x{"}) {
        const auto names = redlock::test::every_name_of("redlock:", resource);
        const auto slot = server_slot(server, names.front());
        for (const auto& name : names)
            BOOST_TEST(server_slot(server, name) == slot, resource << ": " << name);
    }
}

BOOST_AUTO_TEST_SUITE_END()
