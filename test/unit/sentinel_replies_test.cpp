// SPDX-License-Identifier: BSL-1.0
// The pure pieces of following Sentinel (sentinel_locator): the master named by
// SENTINEL GET-MASTER-ADDR-BY-NAME, and the new master a +switch-master message announces.
#include "redis/sentinel_locator.hpp"
#include "support/printing.hpp"
#include "support/resp_values.hpp"

#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

using namespace redlock;
using redis::node_address;
using redis::detail::read_master_addr;
using redis::detail::read_switch_master;
using test::bulk_reply;
using test::error_reply;

namespace {

resp::value aggregate(resp::type kind, std::vector<resp::value> elements) {
    resp::value v;
    v.kind = kind;
    v.elements = std::move(elements);
    return v;
}

node_address master_like() {
    node_address a;
    a.host = "sentinel-host";
    a.port = 26379;
    a.username = "app";
    a.password = "pw";
    a.db = 3;
    return a;
}

resp::value switch_message(std::string channel, std::string text) {
    return aggregate(resp::type::push,
                     {bulk_reply("message"), bulk_reply(std::move(channel)), bulk_reply(std::move(text))});
}

}  // namespace

BOOST_AUTO_TEST_SUITE(sentinel_replies)

BOOST_AUTO_TEST_CASE(the_named_master_keeps_the_uris_credentials_and_database) {
    std::string why;
    const auto master = read_master_addr(
        aggregate(resp::type::array, {bulk_reply("10.0.0.7"), bulk_reply("6380")}), master_like(), why);
    BOOST_TEST_REQUIRE(master.has_value(), why);
    BOOST_TEST(master->host == "10.0.0.7");
    BOOST_TEST(master->port == 6380);
    BOOST_TEST(master->username == "app");
    BOOST_TEST(master->password == "pw");
    BOOST_TEST(master->db == 3);
}

BOOST_AUTO_TEST_CASE(no_master_an_error_or_a_malformed_answer_names_none_and_says_why) {
    std::string why;
    BOOST_TEST(!read_master_addr(test::text_of(resp::type::null, ""), master_like(), why));
    BOOST_TEST(why == "knows no master by that name");
    BOOST_TEST(!read_master_addr(error_reply("NOAUTH Authentication required."), master_like(), why));
    BOOST_TEST(why == "answered NOAUTH Authentication required.");
    for (const auto& bad :
         {aggregate(resp::type::array, {bulk_reply("h")}),
          aggregate(resp::type::array, {bulk_reply("h"), bulk_reply("0")}),
          aggregate(resp::type::array, {bulk_reply("h"), bulk_reply("70000")}),
          aggregate(resp::type::array, {bulk_reply("h"), bulk_reply("12x")}),
          aggregate(resp::type::array, {bulk_reply(""), bulk_reply("1")}), bulk_reply("h:1")}) {
        BOOST_TEST(!read_master_addr(bad, master_like(), why));
        BOOST_TEST(why.find("not [host, port]") != std::string::npos, why);
    }
}

BOOST_AUTO_TEST_CASE(a_switch_master_message_names_the_new_master_of_our_name_only) {
    const auto moved =
        read_switch_master(switch_message("+switch-master", "mymaster 127.0.0.1 7000 127.0.0.2 7001"),
                           "mymaster", master_like());
    BOOST_TEST_REQUIRE(moved.has_value());
    BOOST_TEST(moved->host == "127.0.0.2");
    BOOST_TEST(moved->port == 7001);
    BOOST_TEST(moved->password == "pw");
    // Another master of the same sentinels, another channel, a broken text: nothing.
    BOOST_TEST(!read_switch_master(switch_message("+switch-master", "other 127.0.0.1 7000 127.0.0.2 7001"),
                                   "mymaster", master_like()));
    BOOST_TEST(!read_switch_master(switch_message("+sdown", "mymaster 127.0.0.1 7000 127.0.0.2 7001"),
                                   "mymaster", master_like()));
    for (const auto* text : {"mymaster 127.0.0.1 7000 127.0.0.2", "mymaster 127.0.0.1 7000 127.0.0.2 x",
                             "mymaster 127.0.0.1 7000 127.0.0.2 7001 extra", ""}) {
        BOOST_TEST(!read_switch_master(switch_message("+switch-master", text), "mymaster", master_like()),
                   text);
    }
    BOOST_TEST(!read_switch_master(
        aggregate(resp::type::push,
                  {bulk_reply("subscribe"), bulk_reply("+switch-master"), test::integer_reply(1)}),
        "mymaster", master_like()));
}

BOOST_AUTO_TEST_SUITE_END()
