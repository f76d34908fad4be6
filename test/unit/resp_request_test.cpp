// SPDX-License-Identifier: BSL-1.0
#include "resp/reply_parser.hpp"
#include <redlock/resp/request.hpp>
#include <redlock/resp/value.hpp>

#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

using redlock::resp::reply_parser;
using redlock::resp::request;
using redlock::resp::type;
using redlock::resp::value;
using namespace std::string_literals;

namespace {

// Parses a request payload back: each command must come out as one array of bulk strings.
std::vector<std::vector<std::string>> parse_commands(std::string_view payload) {
    std::vector<std::vector<std::string>> commands;
    reply_parser p;
    while (!payload.empty()) {
        const std::size_t n = p.feed(payload);
        BOOST_REQUIRE(!p.error());
        BOOST_REQUIRE(p.done());  // the payload holds whole commands only
        payload.remove_prefix(n);
        const value v = p.take();
        BOOST_REQUIRE_MESSAGE(v.kind == type::array, to_string(v));
        std::vector<std::string> args;
        for (const value& e : v.elements) {
            BOOST_REQUIRE_MESSAGE(e.kind == type::bulk_string, to_string(e));
            args.push_back(e.str);
        }
        commands.push_back(std::move(args));
    }
    return commands;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(resp_request)

BOOST_AUTO_TEST_CASE(empty_request) {
    const request r;
    BOOST_TEST(r.empty());
    BOOST_TEST(r.size() == 0u);
    BOOST_TEST(r.payload().empty());
}

BOOST_AUTO_TEST_CASE(command_without_arguments) {
    request r;
    r.push("PING");
    BOOST_TEST(r.payload() == "*1\r\n$4\r\nPING\r\n");
    BOOST_TEST(r.size() == 1u);
    BOOST_TEST(!r.empty());
}

BOOST_AUTO_TEST_CASE(string_arguments) {
    request r;
    const std::string key = "{lock}:lock";
    const char* value = "owner";
    r.push("SET", key, value, std::string_view("PX"), "30000");
    BOOST_TEST(r.payload() ==
               "*5\r\n$3\r\nSET\r\n$11\r\n{lock}:lock\r\n$5\r\nowner\r\n$2\r\nPX\r\n$5\r\n30000\r\n");
}

BOOST_AUTO_TEST_CASE(integer_arguments) {
    request r;
    r.push("PEXPIRE", "k", 30000);
    BOOST_TEST(r.payload() == "*3\r\n$7\r\nPEXPIRE\r\n$1\r\nk\r\n$5\r\n30000\r\n");
    r.clear();
    r.push("X", -5, 0, std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max(),
           std::uint64_t{18446744073709551615u});
    BOOST_TEST(r.payload() ==
               "*6\r\n$1\r\nX\r\n$2\r\n-5\r\n$1\r\n0\r\n$20\r\n-9223372036854775808\r\n"
               "$19\r\n9223372036854775807\r\n$20\r\n18446744073709551615\r\n");
}

BOOST_AUTO_TEST_CASE(binary_arguments_are_length_prefixed) {
    request r;
    const std::string binary = "a\r\nb\0c\r\n"s;
    BOOST_REQUIRE_EQUAL(binary.size(), 8u);
    r.push("SET", "k\0"s, binary, ""s);
    BOOST_TEST(r.payload() == "*4\r\n$3\r\nSET\r\n$2\r\nk\0\r\n$8\r\na\r\nb\0c\r\n\r\n$0\r\n\r\n"s);
}

BOOST_AUTO_TEST_CASE(push_range) {
    request r;
    const std::vector<std::string> keys = {"a", "bb", "ccc"};
    r.push_range("DEL", keys);
    BOOST_TEST(r.payload() == "*4\r\n$3\r\nDEL\r\n$1\r\na\r\n$2\r\nbb\r\n$3\r\nccc\r\n");
    r.clear();
    r.push_range("DEL", std::vector<std::string>{});
    BOOST_TEST(r.payload() == "*1\r\n$3\r\nDEL\r\n");
    r.clear();
    r.push_range("X", std::vector<int>{1, -2});
    BOOST_TEST(r.payload() == "*3\r\n$1\r\nX\r\n$1\r\n1\r\n$2\r\n-2\r\n");
}

BOOST_AUTO_TEST_CASE(pipeline_size_and_clear) {
    request r;
    r.push("MULTI");
    r.push("INCR", "fence");
    r.push_range("EXEC", std::vector<std::string>{});
    BOOST_TEST(r.size() == 3u);
    BOOST_TEST(r.payload() == "*1\r\n$5\r\nMULTI\r\n*2\r\n$4\r\nINCR\r\n$5\r\nfence\r\n*1\r\n$4\r\nEXEC\r\n");
    r.clear();
    BOOST_TEST(r.size() == 0u);
    BOOST_TEST(r.empty());
    BOOST_TEST(r.payload().empty());
    r.push("PING");
    BOOST_TEST(r.size() == 1u);
    BOOST_TEST(r.payload() == "*1\r\n$4\r\nPING\r\n");
}

BOOST_AUTO_TEST_CASE(release_payload_moves_the_commands_out_and_leaves_it_empty) {
    request r;
    r.push("SET", "k", "v", "PX", std::numeric_limits<std::int64_t>::min());
    const std::string expected =
        "*5\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n$2\r\nPX\r\n$20\r\n-9223372036854775808\r\n";
    BOOST_TEST(r.payload() == expected);
    BOOST_TEST(r.release_payload() == expected);
    BOOST_TEST(r.empty());
    BOOST_TEST(r.payload().empty());
    r.push("PING");
    BOOST_TEST(r.payload() == "*1\r\n$4\r\nPING\r\n");
}

// Every command is sized before it is appended: one that is long or has many arguments, after
// others, still comes out whole.
BOOST_AUTO_TEST_CASE(a_long_command_after_others_is_encoded_whole) {
    request r;
    r.push("PING");
    std::vector<std::string> args;
    for (int i = 0; i < 300; ++i)
        args.push_back(std::string(static_cast<std::size_t>(i), 'a'));
    r.push_range("RPUSH", args);
    r.push("DEL", std::string(100000, 'k'), 12345u);
    const auto commands = parse_commands(r.payload());
    BOOST_TEST_REQUIRE(commands.size() == 3u);
    BOOST_TEST(commands[1].size() == 301u);
    BOOST_TEST(commands[1][300] == std::string(299, 'a'));
    BOOST_TEST(commands[2][1].size() == 100000u);
    BOOST_TEST(commands[2][2] == "12345");
}

BOOST_AUTO_TEST_CASE(round_trip_through_the_reply_parser) {
    request r;
    const std::string binary = "\r\n\0\xff*1\r\n$3\r\n"s;
    const std::vector<std::string> keys = {"{x}:a", "", std::string(70000, 'k')};
    r.push("EVALSHA", "0123456789abcdef0123456789abcdef01234567", 2, "{x}:lock", "{x}:fence", binary,
           std::numeric_limits<std::int64_t>::min());
    r.push_range("DEL", keys);
    r.push("PING");

    const auto commands = parse_commands(r.payload());
    BOOST_REQUIRE_EQUAL(commands.size(), r.size());
    BOOST_TEST(
        (commands[0] == std::vector<std::string>{"EVALSHA", "0123456789abcdef0123456789abcdef01234567", "2",
                                                 "{x}:lock", "{x}:fence", binary, "-9223372036854775808"}));
    BOOST_TEST((commands[1] == std::vector<std::string>{"DEL", keys[0], keys[1], keys[2]}));
    BOOST_TEST((commands[2] == std::vector<std::string>{"PING"}));
}

BOOST_AUTO_TEST_SUITE_END()
