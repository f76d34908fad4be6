// SPDX-License-Identifier: BSL-1.0
// Redis Cluster's key slots (cluster_slot): CRC16 and the hash-tag rule as the cluster
// specification gives them, and every key a resource's locks use in one slot, so that their
// scripts can run on a cluster. The integration suite compares with CLUSTER KEYSLOT itself.
#include "redis/cluster_slot.hpp"

#include "lock/acquire/lock_options_check.hpp"
#include "support/resource_names.hpp"
#include <redlock/config.hpp>
#include <redlock/error.hpp>
#include <redlock/lock_options.hpp>

#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

using redlock::redis::detail::hash_tag;
using redlock::redis::detail::key_slot;

BOOST_AUTO_TEST_SUITE(cluster_slot_test)

BOOST_AUTO_TEST_CASE(slots_are_crc16_of_the_hash_tag_as_the_cluster_specification_gives_them) {
    // The specification's check value: CRC16("123456789") = 0x31C3.
    BOOST_TEST(key_slot("123456789") == 0x31C3);
    BOOST_TEST(key_slot("foo") == 12182);
    BOOST_TEST(key_slot("{user1000}.following") == key_slot("{user1000}.followers"));
    BOOST_TEST(key_slot("{user1000}.following") == key_slot("user1000"));
    BOOST_TEST(hash_tag("foo{}{bar}") == "foo{}{bar}");  // an empty tag: the whole key
    BOOST_TEST(hash_tag("foo{{bar}}zap") == "{bar");
    BOOST_TEST(hash_tag("foo{bar}{zap}") == "bar");
    BOOST_TEST(hash_tag("no tag}{") == "no tag}{");
    BOOST_TEST(key_slot("") == 0);
}

BOOST_AUTO_TEST_CASE(every_key_of_a_resource_is_in_one_slot) {
    for (const std::string prefix : {"redlock:", "", "a}", "{x"}) {
        for (const std::string resource : {"orders:42", "a}b", "{x}", "x{", "}}", "\xff z"}) {
            if (prefix.empty() && resource.front() == '}') continue;  // refused: see below
            const auto names = redlock::test::every_name_of(prefix, resource);
            for (const auto& name : names)
                BOOST_TEST(key_slot(name) == key_slot(names.front()), prefix << resource << ": " << name);
        }
    }
    // With no prefix, a name that starts with '}' leaves an empty hash tag: refused.
    redlock::client_config cfg;
    cfg.key_prefix = "";
    std::string why;
    BOOST_TEST((redlock::detail::validate_lock_options(cfg, "}x", redlock::lock_options{}, why) ==
                redlock::error::invalid_resource));
    BOOST_TEST(why.find("must not start with '}'") != std::string::npos, why);
    BOOST_TEST(!redlock::detail::validate_lock_options(cfg, "x}", redlock::lock_options{}, why));
    cfg.key_prefix = "p:";
    BOOST_TEST(!redlock::detail::validate_lock_options(cfg, "}x", redlock::lock_options{}, why));
}

BOOST_AUTO_TEST_SUITE_END()
