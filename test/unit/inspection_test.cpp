// SPDX-License-Identifier: BSL-1.0
// Reading inspect.lua's answers and agreeing on the holders a quorum lists; the JSON of
// `redlock inspect --json`. No server: the answers are written out.
#include "lock/admin/resource_admin.hpp"
#include "lock/client/token.hpp"
#include "lock/kinds/hold_reading.hpp"
#include "support/resp_values.hpp"

#include <boost/test/unit_test.hpp>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

using redlock::hold_type;
using redlock::inspection;
using redlock::node_inspection;
using redlock::detail::agree_on_holders;
using redlock::detail::read_node_inspection;
namespace resp = redlock::resp;
using redlock::test::bulk_reply;
using redlock::test::integer_reply;

namespace {

resp::value answer(const std::string& type, std::int64_t pttl, std::int64_t fence, std::int64_t queued,
                   std::int64_t permits, const std::vector<std::string>& holders) {
    resp::value v;
    v.kind = resp::type::array;
    v.elements = {bulk_reply(type), integer_reply(pttl), integer_reply(fence), integer_reply(queued),
                  integer_reply(permits)};
    for (const auto& h : holders)
        v.elements.push_back(bulk_reply(h));
    return v;
}

node_inspection read(const resp::value& v) {
    node_inspection n;
    BOOST_TEST_REQUIRE(read_node_inspection(v, n));
    return n;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(inspection_test)

BOOST_AUTO_TEST_CASE(each_kind_of_hold_is_read_with_its_holders) {
    auto free = read(answer("none", -2, 4, 0, 0, {}));
    BOOST_TEST((free.type == hold_type::free));
    BOOST_TEST(free.holders.empty());
    BOOST_TEST(free.fence == 4u);  // the counter outlives the locks

    auto plain = read(answer("string", 900, 5, 2, 0, {"tok"}));
    BOOST_TEST((plain.type == hold_type::lock));
    BOOST_TEST(plain.pttl_ms == 900);
    BOOST_TEST(plain.queued == 2);
    BOOST_TEST(plain.holders == std::vector<std::string>{"tok"});

    // A reentrant lock's first holder is its owner, then its acquisitions.
    auto reentrant = read(answer("hash", 800, 0, 0, 0, {"worker-7", "a1", "a2"}));
    BOOST_TEST((reentrant.type == hold_type::reentrant));
    BOOST_TEST(reentrant.owner == "worker-7");
    BOOST_TEST(reentrant.holders == (std::vector<std::string>{"a1", "a2"}));

    auto semaphore = read(answer("zset", 700, 0, 0, 3, {"p1", "p2"}));
    BOOST_TEST((semaphore.type == hold_type::semaphore));
    BOOST_TEST(semaphore.permits == 3);
    BOOST_TEST(semaphore.holders.size() == 2u);

    BOOST_TEST((read(answer("list", -1, 0, 0, 0, {})).type == hold_type::other));
}

BOOST_AUTO_TEST_CASE(a_reply_of_another_shape_is_refused) {
    node_inspection n;
    BOOST_TEST(!read_node_inspection(integer_reply(1), n));
    BOOST_TEST(!read_node_inspection(answer("hash", 1, 0, 0, 0, {}), n));  // a hash without its owner
    auto bad = answer("string", 1, 0, 0, 0, {"tok"});
    bad.elements[2] = bulk_reply("x");
    BOOST_TEST(!read_node_inspection(bad, n));
    auto short_one = answer("string", 1, 0, 0, 0, {});
    short_one.elements.pop_back();
    BOOST_TEST(!read_node_inspection(short_one, n));
}

BOOST_AUTO_TEST_CASE(a_holder_counts_when_a_quorum_lists_it_and_the_fence_is_the_largest) {
    inspection i;
    i.resource = "r";
    i.quorum = 3;
    i.nodes.resize(5);
    i.nodes[0] = read(answer("string", 1, 7, 0, 0, {"a"}));
    i.nodes[1] = read(answer("string", 1, 9, 0, 0, {"a"}));
    i.nodes[2] = read(answer("string", 1, 8, 0, 0, {"b"}));
    i.nodes[3] = read(answer("none", -2, 3, 0, 0, {}));
    i.nodes[4].error = redlock::error::request_timeout;
    agree_on_holders(i);
    BOOST_TEST(!i.held());  // "a" on two nodes is not a quorum of five
    BOOST_TEST(i.fence == 9u);

    i.nodes[3] = read(answer("string", 1, 3, 0, 0, {"a"}));
    agree_on_holders(i);
    BOOST_TEST(i.holders == std::vector<std::string>{"a"});

    // A semaphore's permits each count on their own; a reentrant owner too.
    for (auto& n : i.nodes)
        n = read(answer("hash", 1, 0, 0, 0, {"me", "x"}));
    i.nodes[0] = read(answer("hash", 1, 0, 0, 0, {"me", "x", "y"}));
    agree_on_holders(i);
    BOOST_TEST(i.owner == "me");
    BOOST_TEST(i.holders == std::vector<std::string>{"x"});
}

BOOST_AUTO_TEST_CASE(the_json_names_each_node_and_what_a_quorum_agrees_on) {
    inspection i;
    i.resource = "orders:42";
    i.quorum = 1;
    i.nodes.resize(2);
    i.nodes[0] = read(answer("zset", 500, 0, 0, 2, {"p1"}));
    i.nodes[0].node = "127.0.0.1:7000";
    i.nodes[1].node = "127.0.0.1:7001";
    i.nodes[1].error = redlock::error::request_timeout;
    agree_on_holders(i);
    const auto j = nlohmann::json::parse(to_json(i));
    BOOST_TEST(j["resource"] == "orders:42");
    BOOST_TEST(j["held"] == true);
    BOOST_TEST(j["holders"][0] == "p1");
    BOOST_TEST(j["nodes"][0]["type"] == "semaphore");
    BOOST_TEST(j["nodes"][0]["permits"] == 2);
    BOOST_TEST(j["nodes"][1]["node"] == "127.0.0.1:7001");
    BOOST_TEST(j["nodes"][1].contains("error"));
    BOOST_TEST(!j["nodes"][1].contains("type"));
}

// A token records who made it in hex after its 128 random bits; identity_of reads it back from
// a token, and from a fair lock's value ("<place>.<round>", "<place>:<place>.<round>").
BOOST_AUTO_TEST_CASE(a_token_tells_who_made_it) {
    using redlock::identity_of;
    using redlock::detail::holder_identity_text;
    using redlock::detail::make_token;
    const auto token = make_token(holder_identity_text("web-7.example", 4242, "nightly report: 2026"));
    BOOST_TEST(token.find_first_not_of("0123456789abcdefx") == std::string::npos, token);
    BOOST_TEST(token.find('x') == 32u);
    const redlock::holder_identity expected{"web-7.example", 4242, "nightly report: 2026"};
    for (const auto& holder : {token, token + ".3", token + ":" + token + ".12"}) {
        const auto who = identity_of(holder);
        BOOST_TEST_REQUIRE(who.has_value(), holder);
        BOOST_TEST((*who == expected), holder);
    }
    const auto unlabelled = identity_of(make_token(holder_identity_text("h", 1, "")));
    BOOST_TEST_REQUIRE(unlabelled.has_value());
    BOOST_TEST(unlabelled->label.empty());
    // Long names are cut: the token stays bounded.
    const auto long_one =
        identity_of(make_token(holder_identity_text(std::string(300, 'h'), 9, std::string(300, 'l'))));
    BOOST_TEST_REQUIRE(long_one.has_value());
    BOOST_TEST(long_one->host.size() == 64u);
    BOOST_TEST(long_one->label.size() == 64u);
    // None recorded, or not one of ours.
    const auto bare = make_token();
    for (const auto& holder :
         std::vector<std::string>{bare, make_token(""), bare + ".3", bare + "x", bare + "x6", bare + "x68",
                                  "not-a-token", std::string(32, 'A') + "x680a310a",
                                  bare + "x680a" /* "h\n": no pid */, bare + "x680a780a" /* "h\nx\n" */}) {
        BOOST_TEST(!identity_of(holder).has_value(), holder);
    }
    BOOST_TEST(make_token("").size() == 32u);
}

BOOST_AUTO_TEST_SUITE_END()
