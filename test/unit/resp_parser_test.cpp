// SPDX-License-Identifier: BSL-1.0
#include "resp/reply_parser.hpp"
#include <redlock/error.hpp>
#include <redlock/resp/value.hpp>

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

using redlock::resp::parser_limits;
using redlock::resp::reply_parser;
using redlock::resp::type;
using redlock::resp::value;
using namespace std::string_literals;
using namespace std::string_view_literals;

namespace {

boost::system::error_code ec(redlock::error e) {
    return make_error_code(e);
}

// ---- value builders, so expectations read like the wire format ----

value scalar(type kind, std::string s) {
    value v;
    v.kind = kind;
    v.str = std::move(s);
    return v;
}
value simple(std::string s) {
    return scalar(type::simple_string, std::move(s));
}
value bulk(std::string s) {
    return scalar(type::bulk_string, std::move(s));
}
value err(std::string s) {
    return scalar(type::error, std::move(s));
}
value big(std::string s) {
    return scalar(type::big_number, std::move(s));
}
value nil() {
    return value{};
}
value integer(std::int64_t n) {
    value v;
    v.kind = type::integer;
    v.integer = n;
    return v;
}
value boolean(bool b) {
    value v;
    v.kind = type::boolean;
    v.integer = b ? 1 : 0;
    return v;
}
value dbl(double d, std::string text) {
    value v;
    v.kind = type::double_number;
    v.number = d;
    v.str = std::move(text);
    return v;
}
value verbatim(std::string format, std::string s) {
    value v;
    v.kind = type::verbatim_string;
    v.format = std::move(format);
    v.str = std::move(s);
    return v;
}
value agg(type kind, std::vector<value> elements) {
    value v;
    v.kind = kind;
    v.elements = std::move(elements);
    return v;
}
value arr(std::vector<value> e) {
    return agg(type::array, std::move(e));
}
value with_attributes(value v, std::vector<value> attributes) {
    v.attributes = std::move(attributes);
    return v;
}

// ---- driving the parser ----

struct parse_result {
    std::vector<value> values;
    boost::system::error_code error;
    bool partial = false;  // bytes were consumed after the last complete reply (mid-reply at the end)
};

// Feeds the chunks in order exactly as a connection would: feed, drop what was consumed, take a
// finished reply, repeat; stops at the first error.
parse_result parse_chunks(const std::vector<std::string_view>& chunks, parser_limits limits = {}) {
    parse_result r;
    reply_parser p(limits);
    bool mid_reply = false;
    for (std::string_view chunk : chunks) {
        while (!chunk.empty() && !p.error()) {
            const std::size_t n = p.feed(chunk);
            BOOST_REQUIRE_LE(n, chunk.size());
            chunk.remove_prefix(n);
            mid_reply = mid_reply || n > 0;
            if (p.done()) {
                r.values.push_back(p.take());
                mid_reply = false;
            } else if (n == 0 && !p.error()) {
                BOOST_FAIL("feed() made no progress on non-empty input");
            }
        }
        if (p.error()) break;
    }
    r.error = p.error();
    // A reply fed up to its last byte must be reported done by that feed, never later.
    BOOST_TEST(!p.done());
    r.partial = !p.error() && mid_reply;
    return r;
}

parse_result parse_all(std::string_view data, parser_limits limits = {}) {
    return parse_chunks({data}, limits);
}

parse_result parse_bytewise(std::string_view data, parser_limits limits = {}) {
    std::vector<std::string_view> chunks;
    for (std::size_t i = 0; i < data.size(); ++i)
        chunks.push_back(data.substr(i, 1));
    return parse_chunks(chunks, limits);
}

// operator== except that a NaN double equals a NaN double (IEEE equality says NaN != NaN).
bool same(const value& a, const value& b) {
    if (a.kind != b.kind || a.integer != b.integer || a.str != b.str || a.format != b.format ||
        a.elements.size() != b.elements.size() || a.attributes.size() != b.attributes.size()) {
        return false;
    }
    if (!(a.number == b.number) && !(std::isnan(a.number) && std::isnan(b.number))) return false;
    for (std::size_t i = 0; i < a.elements.size(); ++i) {
        if (!same(a.elements[i], b.elements[i])) return false;
    }
    for (std::size_t i = 0; i < a.attributes.size(); ++i) {
        if (!same(a.attributes[i], b.attributes[i])) return false;
    }
    return true;
}

void check_values(const std::vector<value>& got, const std::vector<value>& expected,
                  const std::string& what) {
    BOOST_TEST_CONTEXT(what) {
        BOOST_REQUIRE_EQUAL(got.size(), expected.size());
        for (std::size_t i = 0; i < got.size(); ++i) {
            BOOST_CHECK_MESSAGE(same(got[i], expected[i]), "value " << i << ": got " << to_string(got[i])
                                                                    << ", expected "
                                                                    << to_string(expected[i]));
        }
    }
}

// Parses a stream holding exactly one reply, fed at once and byte by byte, and returns it.
value parse_one(std::string_view data, parser_limits limits = {}) {
    const parse_result whole = parse_all(data, limits);
    BOOST_TEST_REQUIRE(!whole.error, "unexpected error " << whole.error.message());
    BOOST_REQUIRE_EQUAL(whole.values.size(), 1u);
    const parse_result bytes = parse_bytewise(data, limits);
    BOOST_TEST_REQUIRE(!bytes.error);
    check_values(bytes.values, whole.values, "byte by byte");
    return whole.values[0];
}

void check_one(std::string_view data, const value& expected) {
    const value got = parse_one(data);
    BOOST_CHECK_MESSAGE(got == expected, "parsing " << to_string(scalar(type::bulk_string, std::string(data)))
                                                    << ": got " << to_string(got) << ", expected "
                                                    << to_string(expected));
}

// Expects the stream to fail with `expected`, fed at once, byte by byte and split in two
// everywhere: the error may not depend on how the bytes arrive.
void check_error(std::string_view data, redlock::error expected, parser_limits limits = {}) {
    BOOST_TEST_CONTEXT("input " << to_string(bulk(std::string(data)))) {
        const parse_result whole = parse_all(data, limits);
        BOOST_TEST(whole.error == ec(expected), "got '" << whole.error.message() << "'");
        BOOST_TEST(parse_bytewise(data, limits).error == ec(expected));
        for (std::size_t i = 1; i < data.size(); ++i) {
            const parse_result split = parse_chunks({data.substr(0, i), data.substr(i)}, limits);
            BOOST_TEST(split.error == ec(expected), "split at " << i);
        }
    }
}

// Resident and virtual size of this process in bytes, from /proc/self/status.
struct memory_usage {
    std::uint64_t virtual_bytes = 0;
    std::uint64_t resident_bytes = 0;
};
memory_usage read_memory_usage() {
    memory_usage m;
    std::ifstream status("/proc/self/status");
    std::string key;
    while (status >> key) {
        std::uint64_t kb = 0;
        if (key == "VmSize:" && status >> kb) m.virtual_bytes = kb * 1024;
        if (key == "VmRSS:" && status >> kb) m.resident_bytes = kb * 1024;
        status.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
    }
    return m;
}

// A stream of varied replies covering every type, binary payloads with CRLF inside, nesting,
// attributes (top level, inside an array, merged) and RESP2 nulls. No NaN: value's operator==
// is IEEE equality and NaN != NaN (NaN is checked on its own below).
const std::string corpus =
    "+OK\r\n"
    "-ERR unknown command 'foo', with args beginning with: \r\n"
    ":0\r\n"
    ":-9223372036854775808\r\n"
    "$5\r\nhello\r\n"
    "$0\r\n\r\n"
    "$-1\r\n"
    "*-1\r\n"
    "_\r\n"
    "$8\r\n\r\n\0\xff\r\n\r\n\r\n"s
    "*3\r\n:1\r\n$3\r\nfoo\r\n*2\r\n+a\r\n_\r\n"
    "%2\r\n+first\r\n:1\r\n$6\r\nsecond\r\n*1\r\n#t\r\n"
    "~2\r\n+x\r\n+y\r\n"
    ">3\r\n$7\r\nmessage\r\n$4\r\nchan\r\n$5\r\nhello\r\n"
    ",3.14\r\n"
    ",-inf\r\n"
    "#f\r\n"
    "(3492890328409238509324850943850943825024385\r\n"
    "=15\r\ntxt:Some string\r\n"
    "!21\r\nSYNTAX invalid syntax\r\n"
    "|1\r\n+key-popularity\r\n%2\r\n$1\r\na\r\n,0.1923\r\n$1\r\nb\r\n,0.0012\r\n*2\r\n:2039123\r\n:"
    "9543892\r\n"
    "*3\r\n:1\r\n|1\r\n+ttl\r\n:3600\r\n:2\r\n:3\r\n"
    "|1\r\n+a\r\n+b\r\n|1\r\n+c\r\n+d\r\n:5\r\n"
    "*0\r\n"
    "%0\r\n"
    "*1\r\n*1\r\n*1\r\n:7\r\n";

std::vector<value> corpus_values() {
    const value popular =
        agg(type::map, {bulk("a"), dbl(0.1923, "0.1923"), bulk("b"), dbl(0.0012, "0.0012")});
    return {
        simple("OK"),
        err("ERR unknown command 'foo', with args beginning with: "),
        integer(0),
        integer(std::numeric_limits<std::int64_t>::min()),
        bulk("hello"),
        bulk(""),
        nil(),
        nil(),
        nil(),
        bulk("\r\n\0\xff\r\n\r\n"s),
        arr({integer(1), bulk("foo"), arr({simple("a"), nil()})}),
        agg(type::map, {simple("first"), integer(1), bulk("second"), arr({boolean(true)})}),
        agg(type::set, {simple("x"), simple("y")}),
        agg(type::push, {bulk("message"), bulk("chan"), bulk("hello")}),
        dbl(3.14, "3.14"),
        dbl(-std::numeric_limits<double>::infinity(), "-inf"),
        boolean(false),
        big("3492890328409238509324850943850943825024385"),
        verbatim("txt", "Some string"),
        err("SYNTAX invalid syntax"),
        with_attributes(arr({integer(2039123), integer(9543892)}), {simple("key-popularity"), popular}),
        arr({integer(1), with_attributes(integer(2), {simple("ttl"), integer(3600)}), integer(3)}),
        with_attributes(integer(5), {simple("a"), simple("b"), simple("c"), simple("d")}),
        arr({}),
        agg(type::map, {}),
        arr({arr({arr({integer(7)})})}),
    };
}

}  // namespace

BOOST_AUTO_TEST_SUITE(resp_parser)

// ---------------------------------------------------------------- every type

BOOST_AUTO_TEST_CASE(simple_string_and_error) {
    check_one("+OK\r\n", simple("OK"));
    check_one("+\r\n", simple(""));
    check_one("-ERR wrong number of arguments\r\n", err("ERR wrong number of arguments"));
}

BOOST_AUTO_TEST_CASE(error_reply_is_a_value_with_a_code) {
    const value v = parse_one("-NOSCRIPT No matching script. Please use EVAL.\r\n");
    BOOST_TEST((v.kind == type::error));
    BOOST_TEST(v.is_error());
    BOOST_TEST(v.str == "NOSCRIPT No matching script. Please use EVAL.");
    BOOST_TEST(v.error_code() == "NOSCRIPT");
    BOOST_TEST(parse_one("-WRONGPASS\r\n").error_code() == "WRONGPASS");
}

BOOST_AUTO_TEST_CASE(integers) {
    check_one(":0\r\n", integer(0));
    check_one(":1\r\n", integer(1));
    check_one(":-42\r\n", integer(-42));
    check_one(":007\r\n", integer(7));
    check_one(":9223372036854775807\r\n", integer(std::numeric_limits<std::int64_t>::max()));
    check_one(":-9223372036854775808\r\n", integer(std::numeric_limits<std::int64_t>::min()));
}

BOOST_AUTO_TEST_CASE(bulk_strings) {
    check_one("$5\r\nhello\r\n", bulk("hello"));
    check_one("$0\r\n\r\n", bulk(""));
    // Binary-safe: CR, LF and NUL inside the payload are data.
    check_one("$7\r\na\r\nb\0\r\n\r\n"sv, bulk("a\r\nb\0\r\n"s));
    const std::string large(100000, 'x');
    check_one("$100000\r\n" + large + "\r\n", bulk(large));
}

BOOST_AUTO_TEST_CASE(blob_error_is_an_error_value) {
    const value v = parse_one("!21\r\nSYNTAX invalid syntax\r\n");
    BOOST_TEST((v == err("SYNTAX invalid syntax")));
    BOOST_TEST(v.error_code() == "SYNTAX");
    check_one("!0\r\n\r\n", err(""));
}

BOOST_AUTO_TEST_CASE(nulls_resp3_and_resp2) {
    check_one("_\r\n", nil());
    check_one("$-1\r\n", nil());
    check_one("*-1\r\n", nil());
    BOOST_TEST(parse_one("$-1\r\n").is_null());
    check_error("_x\r\n", redlock::error::protocol_error);
}

BOOST_AUTO_TEST_CASE(doubles) {
    check_one(",1.5\r\n", dbl(1.5, "1.5"));
    check_one(",-0.25\r\n", dbl(-0.25, "-0.25"));
    check_one(",10\r\n", dbl(10, "10"));
    check_one(",1.23e-5\r\n", dbl(1.23e-5, "1.23e-5"));
    check_one(",inf\r\n", dbl(std::numeric_limits<double>::infinity(), "inf"));
    check_one(",-inf\r\n", dbl(-std::numeric_limits<double>::infinity(), "-inf"));
    const value nan = parse_one(",nan\r\n");
    BOOST_TEST((nan.kind == type::double_number));
    BOOST_TEST(std::isnan(nan.number));
    BOOST_TEST(nan.str == "nan");
}

BOOST_AUTO_TEST_CASE(booleans) {
    check_one("#t\r\n", boolean(true));
    check_one("#f\r\n", boolean(false));
    BOOST_TEST(parse_one("#t\r\n").integer == 1);
}

BOOST_AUTO_TEST_CASE(big_numbers) {
    check_one("(3492890328409238509324850943850943825024385\r\n",
              big("3492890328409238509324850943850943825024385"));
    check_one("(-3492890328409238509324850943850943825024385\r\n",
              big("-3492890328409238509324850943850943825024385"));
    check_one("(0\r\n", big("0"));
}

BOOST_AUTO_TEST_CASE(verbatim_strings) {
    const value v = parse_one("=15\r\ntxt:Some string\r\n");
    BOOST_TEST((v.kind == type::verbatim_string));
    BOOST_TEST(v.format == "txt");
    BOOST_TEST(v.str == "Some string");
    check_one("=4\r\nmkd:\r\n", verbatim("mkd", ""));
    check_one("=10\r\ntxt:a\r\nb\r\n\r\n", verbatim("txt", "a\r\nb\r\n"));
    // Too short for "fmt:" or no colon after the format.
    check_error("=3\r\ntxt\r\n", redlock::error::protocol_error);
    check_error("=0\r\n\r\n", redlock::error::protocol_error);
    check_error("=5\r\ntxtxy\r\n", redlock::error::protocol_error);
    // Verbatim has no RESP2 null.
    check_error("=-1\r\n", redlock::error::resp_invalid_number);
}

BOOST_AUTO_TEST_CASE(arrays_and_nesting) {
    check_one("*0\r\n", arr({}));
    check_one("*2\r\n$3\r\nfoo\r\n:1\r\n", arr({bulk("foo"), integer(1)}));
    check_one("*3\r\n*2\r\n:1\r\n*0\r\n_\r\n*1\r\n*1\r\n$1\r\nx\r\n",
              arr({arr({integer(1), arr({})}), nil(), arr({arr({bulk("x")})})}));
    // RESP2 nulls as elements.
    check_one("*3\r\n$-1\r\n*-1\r\n:5\r\n", arr({nil(), nil(), integer(5)}));
}

BOOST_AUTO_TEST_CASE(maps_are_flattened) {
    const value v = parse_one("%2\r\n+first\r\n:1\r\n+second\r\n*2\r\n:2\r\n:3\r\n");
    BOOST_TEST((v.kind == type::map));
    BOOST_REQUIRE_EQUAL(v.elements.size(), 4u);  // declared 2 pairs -> 4 elements
    BOOST_TEST((
        v == agg(type::map, {simple("first"), integer(1), simple("second"), arr({integer(2), integer(3)})})));
    check_one("%0\r\n", agg(type::map, {}));
    check_one("%1\r\n%1\r\n+k\r\n+v\r\n_\r\n",
              agg(type::map, {agg(type::map, {simple("k"), simple("v")}), nil()}));
}

BOOST_AUTO_TEST_CASE(sets_and_pushes) {
    check_one("~3\r\n+a\r\n:1\r\n#t\r\n", agg(type::set, {simple("a"), integer(1), boolean(true)}));
    check_one(">4\r\n+pubsub\r\n+message\r\n+somechannel\r\n+this is the message\r\n",
              agg(type::push, {simple("pubsub"), simple("message"), simple("somechannel"),
                               simple("this is the message")}));
    check_one(">0\r\n", agg(type::push, {}));
}

BOOST_AUTO_TEST_CASE(attribute_before_a_top_level_value) {
    const value v = parse_one(
        "|1\r\n+key-popularity\r\n%2\r\n$1\r\na\r\n,0.1923\r\n$1\r\nb\r\n,0.0012\r\n"
        "*2\r\n:2039123\r\n:9543892\r\n");
    BOOST_TEST((v.kind == type::array));
    BOOST_TEST((v.elements == std::vector<value>{integer(2039123), integer(9543892)}));
    BOOST_REQUIRE_EQUAL(v.attributes.size(), 2u);
    BOOST_TEST((v.attributes[0] == simple("key-popularity")));
    BOOST_TEST((v.attributes[1] ==
                agg(type::map, {bulk("a"), dbl(0.1923, "0.1923"), bulk("b"), dbl(0.0012, "0.0012")})));
    // The elements of an annotated aggregate carry no attributes themselves.
    BOOST_TEST(v.elements[0].attributes.empty());
    check_one("|1\r\n+ttl\r\n:10\r\n+OK\r\n", with_attributes(simple("OK"), {simple("ttl"), integer(10)}));
}

BOOST_AUTO_TEST_CASE(attribute_inside_an_array_is_not_an_element) {
    const value v = parse_one("*2\r\n:1\r\n|1\r\n+ttl\r\n:3600\r\n:2\r\n");
    BOOST_REQUIRE_EQUAL(v.elements.size(), 2u);
    BOOST_TEST((v == arr({integer(1), with_attributes(integer(2), {simple("ttl"), integer(3600)})})));
    // An attribute before the first element, and one that annotates a nested aggregate.
    check_one("*1\r\n|1\r\n+a\r\n+b\r\n*1\r\n:1\r\n",
              arr({with_attributes(arr({integer(1)}), {simple("a"), simple("b")})}));
    // An attribute of the map key inside an attribute.
    check_one(
        "|1\r\n|1\r\n+x\r\n+y\r\n+k\r\n+v\r\n:1\r\n",
        with_attributes(integer(1), {with_attributes(simple("k"), {simple("x"), simple("y")}), simple("v")}));
}

BOOST_AUTO_TEST_CASE(consecutive_attributes_merge_and_empty_attribute_is_ignored) {
    check_one("|1\r\n+a\r\n+b\r\n|1\r\n+c\r\n+d\r\n:5\r\n",
              with_attributes(integer(5), {simple("a"), simple("b"), simple("c"), simple("d")}));
    check_one("|0\r\n:5\r\n", integer(5));
}

BOOST_AUTO_TEST_CASE(an_attribute_alone_is_not_a_reply) {
    const parse_result r = parse_all("|1\r\n+a\r\n+b\r\n");
    BOOST_TEST(r.values.empty());
    BOOST_TEST(!r.error);
    BOOST_TEST(r.partial);
}

BOOST_AUTO_TEST_CASE(realistic_hello3_reply) {
    const std::string hello =
        "%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$6\r\n7.0.15\r\n$5\r\nproto\r\n:3\r\n"
        "$2\r\nid\r\n:12\r\n$4\r\nmode\r\n$10\r\nstandalone\r\n$4\r\nrole\r\n$6\r\nmaster\r\n"
        "$7\r\nmodules\r\n*0\r\n";
    check_one(hello,
              agg(type::map, {bulk("server"), bulk("redis"), bulk("version"), bulk("7.0.15"), bulk("proto"),
                              integer(3), bulk("id"), integer(12), bulk("mode"), bulk("standalone"),
                              bulk("role"), bulk("master"), bulk("modules"), arr({})}));
}

// ---------------------------------------------------------------- split invariance

BOOST_AUTO_TEST_CASE(corpus_parses_to_the_expected_values) {
    const parse_result whole = parse_all(corpus);
    BOOST_TEST(!whole.error);
    BOOST_TEST(!whole.partial);
    check_values(whole.values, corpus_values(), "corpus fed at once");
}

BOOST_AUTO_TEST_CASE(every_two_way_split_gives_the_same_values) {
    const std::string_view stream = corpus;
    const parse_result whole = parse_all(stream);
    BOOST_REQUIRE(!whole.error);
    for (std::size_t i = 0; i <= stream.size(); ++i) {
        const parse_result split = parse_chunks({stream.substr(0, i), stream.substr(i)});
        BOOST_TEST_CONTEXT("split at " << i) {
            BOOST_TEST(!split.error);
            BOOST_TEST(!split.partial);
            BOOST_REQUIRE_EQUAL(split.values.size(), whole.values.size());
            BOOST_TEST((split.values == whole.values));
        }
    }
}

BOOST_AUTO_TEST_CASE(byte_by_byte_gives_the_same_values) {
    const parse_result whole = parse_all(corpus);
    const parse_result bytes = parse_bytewise(corpus);
    BOOST_TEST(!bytes.error);
    check_values(bytes.values, whole.values, "byte by byte");
}

BOOST_AUTO_TEST_CASE(every_three_way_split_of_a_nested_reply) {
    const std::string_view stream =
        "*2\r\n|1\r\n+a\r\n$3\r\nb\r\n\r\n%1\r\n=8\r\ntxt:x\r\ny\r\n~1\r\n,-1.5\r\n:2\r\n";
    const parse_result whole = parse_all(stream);
    BOOST_REQUIRE(!whole.error);
    BOOST_REQUIRE_EQUAL(whole.values.size(), 1u);
    for (std::size_t i = 0; i <= stream.size(); ++i) {
        for (std::size_t j = i; j <= stream.size(); ++j) {
            const parse_result split =
                parse_chunks({stream.substr(0, i), stream.substr(i, j - i), stream.substr(j)});
            BOOST_TEST((split.values == whole.values), "split at " << i << ", " << j);
        }
    }
}

BOOST_AUTO_TEST_CASE(broken_streams_fail_the_same_way_at_every_split) {
    // Valid replies, then the fault: the replies before the fault are delivered, then the error.
    const std::string prefix = "+OK\r\n*2\r\n:1\r\n$2\r\nab\r\n";
    const std::vector<std::pair<std::string, redlock::error>> cases = {
        {"$3\r\nabcd\r\n", redlock::error::resp_missing_crlf},
        {"*1\r\n:1x\r\n", redlock::error::resp_invalid_number},
        {"*1\r\n?\r\n", redlock::error::resp_invalid_type},
        {"+OK\n", redlock::error::protocol_error},
        {":99999999999999999999\r\n", redlock::error::resp_length_overflow},
        {"=3\r\nabc\r\n", redlock::error::protocol_error},
    };
    for (const auto& [tail, expected] : cases) {
        const std::string stream = prefix + tail;
        BOOST_TEST_CONTEXT("tail " << to_string(bulk(tail))) {
            for (std::size_t i = 0; i <= stream.size(); ++i) {
                const parse_result r =
                    parse_chunks({std::string_view(stream).substr(0, i), std::string_view(stream).substr(i)});
                BOOST_TEST(r.error == ec(expected), "split at " << i);
                BOOST_TEST((r.values == std::vector<value>{simple("OK"), arr({integer(1), bulk("ab")})}));
            }
        }
    }
}

// ---------------------------------------------------------------- feed() contract

BOOST_AUTO_TEST_CASE(feed_stops_after_each_reply) {
    const std::string_view data = "+OK\r\n:1\r\n$3\r\nfoo\r\n";
    reply_parser p;
    BOOST_TEST(p.feed(data) == 5u);
    BOOST_TEST(p.done());
    // Nothing more is consumed while a reply waits to be taken.
    BOOST_TEST(p.feed(data.substr(5)) == 0u);
    BOOST_TEST((p.take() == simple("OK")));
    BOOST_TEST(!p.done());
    BOOST_TEST(p.feed(data.substr(5)) == 4u);
    BOOST_TEST((p.take() == integer(1)));
    BOOST_TEST(p.feed(data.substr(9)) == 9u);
    BOOST_TEST((p.take() == bulk("foo")));
    BOOST_TEST(!p.done());
    BOOST_TEST(!p.error());
}

BOOST_AUTO_TEST_CASE(partial_reply_consumes_everything_and_is_not_done) {
    reply_parser p;
    BOOST_TEST(p.feed("*2\r\n$5\r\nhel") == 11u);
    BOOST_TEST(!p.done());
    BOOST_TEST(p.feed("lo\r\n:") == 5u);
    BOOST_TEST(!p.done());
    BOOST_TEST(p.feed("7\r\n+next\r\n") == 3u);
    BOOST_TEST(p.done());
    BOOST_TEST((p.take() == arr({bulk("hello"), integer(7)})));
}

BOOST_AUTO_TEST_CASE(take_leaves_a_clean_parser) {
    reply_parser p;
    p.feed("|1\r\n+a\r\n+b\r\n*1\r\n$1\r\nx\r\n");
    BOOST_REQUIRE(p.done());
    BOOST_TEST(!p.take().attributes.empty());
    p.feed("+OK\r\n");
    BOOST_REQUIRE(p.done());
    BOOST_TEST((p.take() == simple("OK")));  // no leftover attributes, elements or format
}

BOOST_AUTO_TEST_CASE(errors_are_sticky_until_reset) {
    reply_parser p;
    BOOST_TEST(p.feed("+OK\r\n") == 5u);
    BOOST_TEST((p.take() == simple("OK")));
    BOOST_TEST(p.feed("X") == 1u);
    BOOST_TEST(p.error() == ec(redlock::error::resp_invalid_type));
    BOOST_TEST(p.feed("+OK\r\n") == 0u);
    BOOST_TEST(!p.done());
    BOOST_TEST(p.error() == ec(redlock::error::resp_invalid_type));
    p.reset();
    BOOST_TEST(!p.error());
    BOOST_TEST(p.feed("+OK\r\n") == 5u);
    BOOST_TEST(p.done());
    BOOST_TEST((p.take() == simple("OK")));
}

BOOST_AUTO_TEST_CASE(reset_forgets_a_partial_reply) {
    reply_parser p;
    p.feed("*3\r\n|1\r\n+a\r\n+b\r\n:1\r\n$10\r\nabc");
    BOOST_TEST(!p.done());
    p.reset();
    BOOST_TEST(p.feed(":2\r\n") == 4u);
    BOOST_REQUIRE(p.done());
    BOOST_TEST((p.take() == integer(2)));
    p.feed("+par");
    p.reset();
    p.feed("+OK\r\n");
    BOOST_REQUIRE(p.done());
    BOOST_TEST((p.take() == simple("OK")));
}

BOOST_AUTO_TEST_CASE(limits_are_kept) {
    parser_limits l;
    l.max_depth = 3;
    reply_parser p(l);
    BOOST_TEST(p.limits().max_depth == 3u);
    BOOST_TEST(reply_parser{}.limits().max_line_length == parser_limits{}.max_line_length);
}

// ---------------------------------------------------------------- limits

BOOST_AUTO_TEST_CASE(deep_nesting_fails_fast_without_recursion) {
    std::string deep;
    for (int i = 0; i < 10000; ++i)
        deep += "*1\r\n";
    deep += ":1\r\n";
    const auto start = std::chrono::steady_clock::now();
    reply_parser p;
    const std::size_t consumed = p.feed(deep);
    BOOST_TEST(p.error() == ec(redlock::error::resp_nesting_too_deep));
    BOOST_TEST(!p.done());
    BOOST_TEST(consumed < deep.size());  // stopped at the limit, not at the end
    const auto elapsed = std::chrono::steady_clock::now() - start;
    BOOST_TEST(std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count() < 1000);
    BOOST_TEST(parse_bytewise(deep).error == ec(redlock::error::resp_nesting_too_deep));
}

BOOST_AUTO_TEST_CASE(nesting_limit_is_exact_and_attributes_count) {
    parser_limits l;
    l.max_depth = 3;
    BOOST_TEST(!parse_all("*1\r\n*1\r\n*1\r\n:1\r\n", l).error);
    BOOST_TEST(!parse_all("*1\r\n*1\r\n*0\r\n", l).error);
    check_error("*1\r\n*1\r\n*1\r\n*1\r\n:1\r\n", redlock::error::resp_nesting_too_deep, l);
    check_error("*1\r\n*1\r\n*1\r\n*0\r\n", redlock::error::resp_nesting_too_deep, l);
    check_error("%1\r\n~1\r\n>1\r\n*1\r\n:1\r\n", redlock::error::resp_nesting_too_deep, l);
    check_error("*1\r\n*1\r\n|1\r\n*1\r\n:1\r\n:1\r\n:1\r\n", redlock::error::resp_nesting_too_deep, l);
    // The depth unwinds: siblings at the limit are fine.
    BOOST_TEST(!parse_all("*2\r\n*1\r\n*1\r\n:1\r\n*1\r\n*1\r\n:2\r\n", l).error);
}

BOOST_AUTO_TEST_CASE(aggregate_count_limit) {
    parser_limits l;
    l.max_aggregate_elements = 4;
    BOOST_TEST(!parse_all("*4\r\n:1\r\n:2\r\n:3\r\n:4\r\n", l).error);
    check_error("*5\r\n", redlock::error::resp_aggregate_too_large, l);
    check_error("~5\r\n", redlock::error::resp_aggregate_too_large, l);
    check_error(">5\r\n", redlock::error::resp_aggregate_too_large, l);
    check_error("|5\r\n", redlock::error::resp_aggregate_too_large, l);
    // The limit is on the declared count: a map of 4 pairs (8 elements) is fine, 5 pairs is not.
    BOOST_TEST(!parse_all("%4\r\n:1\r\n:2\r\n:3\r\n:4\r\n:5\r\n:6\r\n:7\r\n:8\r\n", l).error);
    check_error("%5\r\n", redlock::error::resp_aggregate_too_large, l);
    // Default limit (1 Mi elements); a huge declared count does not allocate up front.
    const parse_result ok = parse_all("*1048576\r\n:1\r\n");
    BOOST_TEST(!ok.error);
    BOOST_TEST(ok.partial);
    check_error("*1048577\r\n", redlock::error::resp_aggregate_too_large);
    check_error("*9223372036854775807\r\n", redlock::error::resp_aggregate_too_large);
    check_error("%9223372036854775807\r\n", redlock::error::resp_aggregate_too_large);
}

// Three bytes of `_\r\n` become a whole value each: the count and depth limits alone let 3 MiB
// of them take 140+ MiB. The memory of one reply is bounded too, with the default limits.
BOOST_AUTO_TEST_CASE(the_memory_of_one_reply_is_bounded) {
    std::string nulls = "*1048576\r\n";
    for (int i = 0; i < 1048576; ++i)
        nulls += "_\r\n";
    BOOST_TEST(parse_all(nulls).error == ec(redlock::error::resp_reply_too_large));

    parser_limits l;
    l.max_reply_bytes = 5 * sizeof(value) + 100;
    // Values and their text both count: an array of three is four values.
    BOOST_TEST(!parse_all("*3\r\n:1\r\n:2\r\n$50\r\n" + std::string(50, 'x') + "\r\n", l).error);
    const std::string long_text(sizeof(value) + 200, 'x');
    check_error("*3\r\n:1\r\n:2\r\n$" + std::to_string(long_text.size()) + "\r\n" + long_text + "\r\n",
                redlock::error::resp_reply_too_large, l);
    check_error("*3\r\n:1\r\n:2\r\n+" + long_text + "\r\n", redlock::error::resp_reply_too_large, l);
    check_error("*6\r\n_\r\n_\r\n_\r\n_\r\n_\r\n_\r\n", redlock::error::resp_reply_too_large, l);
    // Per reply: two that each fit parse one after the other.
    const std::string three = "*3\r\n:1\r\n:2\r\n:3\r\n";
    const parse_result two = parse_all(three + three, l);
    BOOST_TEST(!two.error);
    BOOST_TEST(two.values.size() == 2u);
}

BOOST_AUTO_TEST_CASE(huge_declared_count_with_raised_limit_is_accepted_lazily) {
    parser_limits l;
    l.max_aggregate_elements = std::numeric_limits<std::size_t>::max();
    const parse_result r = parse_all("%9223372036854775807\r\n:1\r\n*4611686018427387904\r\n", l);
    BOOST_TEST(!r.error);
    BOOST_TEST(r.partial);
}

BOOST_AUTO_TEST_CASE(bulk_length_limit) {
    check_error("$4294967296\r\n", redlock::error::resp_bulk_too_large);
    check_error("$536870913\r\n", redlock::error::resp_bulk_too_large);
    check_error("!536870913\r\n", redlock::error::resp_bulk_too_large);
    check_error("=536870913\r\n", redlock::error::resp_bulk_too_large);
    const parse_result at_limit = parse_all("$536870912\r\nabc");
    BOOST_TEST(!at_limit.error);
    BOOST_TEST(at_limit.partial);
    parser_limits l;
    l.max_bulk_length = 3;
    BOOST_TEST(!parse_all("$3\r\nabc\r\n", l).error);
    check_error("$4\r\nabcd\r\n", redlock::error::resp_bulk_too_large, l);
}

BOOST_AUTO_TEST_CASE(declared_bulk_length_does_not_allocate) {
    parser_limits l;
    l.max_bulk_length = std::size_t{8} << 30;  // 8 GiB
    const std::string header = "$4294967296\r\n";
    const std::string payload(std::size_t{1} << 20, 'x');
    const std::string stream = header + payload;

    // VmSize catches a reserve() of the declared size even though its pages are never touched
    // (they would not show in RSS); VmRSS catches anything that is touched.
    const memory_usage before = read_memory_usage();
    BOOST_REQUIRE(before.virtual_bytes > 0);

    reply_parser at_once(l);
    BOOST_TEST(at_once.feed(stream) == stream.size());
    BOOST_TEST(!at_once.error());
    BOOST_TEST(!at_once.done());

    reply_parser trickle(l);
    std::string_view rest = stream;
    while (!rest.empty()) {
        const std::string_view chunk = rest.substr(0, 4096);
        BOOST_REQUIRE_EQUAL(trickle.feed(chunk), chunk.size());
        rest.remove_prefix(chunk.size());
    }
    BOOST_TEST(!trickle.error());
    BOOST_TEST(!trickle.done());

    const memory_usage after = read_memory_usage();
    const std::uint64_t limit = 100u << 20;
    BOOST_TEST(after.virtual_bytes < before.virtual_bytes + limit,
               "virtual size grew by " << (after.virtual_bytes - before.virtual_bytes) << " bytes");
    BOOST_TEST(after.resident_bytes < before.resident_bytes + limit,
               "resident size grew by " << (after.resident_bytes - before.resident_bytes) << " bytes");
}

BOOST_AUTO_TEST_CASE(line_too_long) {
    const std::string long_line = "+" + std::string(1 << 20, 'a');
    BOOST_TEST(parse_all(long_line).error == ec(redlock::error::resp_line_too_long));
    // Detected while the line is still incomplete, once the limit is passed.
    reply_parser p;
    std::size_t fed = 0;
    while (!p.error() && fed < long_line.size()) {
        fed += p.feed(std::string_view(long_line).substr(fed, 1000));
    }
    BOOST_TEST(p.error() == ec(redlock::error::resp_line_too_long));
    BOOST_TEST(fed <= parser_limits{}.max_line_length + 1000 + 3);
    // Every header line is bounded, not only simple strings.
    BOOST_TEST(parse_all("-" + std::string(1 << 20, 'E')).error == ec(redlock::error::resp_line_too_long));
    BOOST_TEST(parse_all(":" + std::string(1 << 20, '1')).error == ec(redlock::error::resp_line_too_long));
    BOOST_TEST(parse_all("$" + std::string(1 << 20, '1')).error == ec(redlock::error::resp_line_too_long));
}

BOOST_AUTO_TEST_CASE(line_length_limit_is_exact) {
    parser_limits l;
    l.max_line_length = 8;  // content bytes between the type byte and CRLF
    const parse_result at_limit = parse_all("+12345678\r\n", l);
    BOOST_TEST(!at_limit.error);
    BOOST_TEST((at_limit.values == std::vector<value>{simple("12345678")}));
    BOOST_TEST(!parse_bytewise("+12345678\r\n", l).error);
    check_error("+123456789\r\n", redlock::error::resp_line_too_long, l);
    check_error("+123456789\r", redlock::error::resp_line_too_long, l);
    check_error("+1234567890", redlock::error::resp_line_too_long, l);
    check_error(":1234567890\r\n", redlock::error::resp_line_too_long, l);
    // 9 bytes then a bare LF: the LF comes within the window, so it is the LF that is wrong.
    check_error("+123456789\n", redlock::error::protocol_error, l);
    // Not an error yet: the line might still end in CRLF.
    const parse_result pending = parse_all("+12345678\r", l);
    BOOST_TEST(!pending.error);
    BOOST_TEST(pending.partial);
    // The bulk payload is not a line: only the header is bounded.
    BOOST_TEST(!parse_all("$20\r\n01234567890123456789\r\n", l).error);
}

BOOST_AUTO_TEST_CASE(overflow) {
    check_error(":9223372036854775808\r\n", redlock::error::resp_length_overflow);
    check_error(":-9223372036854775809\r\n", redlock::error::resp_length_overflow);
    check_error(":99999999999999999999999999\r\n", redlock::error::resp_length_overflow);
    check_error("*99999999999999999999\r\n", redlock::error::resp_length_overflow);
    check_error("$99999999999999999999\r\n", redlock::error::resp_length_overflow);
    check_error("%18446744073709551616\r\n", redlock::error::resp_length_overflow);
}

BOOST_AUTO_TEST_CASE(invalid_numbers) {
    for (const char* bad :
         {":\r\n",   ":+1\r\n", ":abc\r\n", ":-\r\n",    ":1 \r\n",  ": 1\r\n", ":1.5\r\n", ":0x10\r\n",
          "$\r\n",   "$+3\r\n", "$3a\r\n",  "*x\r\n",    "*\r\n",    "%-\r\n",  "$?\r\n",   "*?\r\n",
          "~?\r\n",  ",\r\n",   ",abc\r\n", ",1.5x\r\n", ", 1\r\n",  ",+1\r\n", "#\r\n",    "#x\r\n",
          "#tt\r\n", "#T\r\n",  "(\r\n",    "(-\r\n",    "(12a\r\n", "(+1\r\n", "(1.5\r\n"}) {
        check_error(bad, redlock::error::resp_invalid_number);
    }
}

BOOST_AUTO_TEST_CASE(negative_lengths_other_than_resp2_null) {
    for (const char* bad : {"$-2\r\n", "*-2\r\n", "$-0\r\n", "$-01\r\n", "*-9223372036854775808\r\n",
                            "%-1\r\n", "~-1\r\n", ">-1\r\n", "|-1\r\n", "!-1\r\n", "=-1\r\n"}) {
        check_error(bad, redlock::error::resp_invalid_number);
    }
}

BOOST_AUTO_TEST_CASE(missing_crlf_after_bulk) {
    check_error("$3\r\nfooX\r\n", redlock::error::resp_missing_crlf);
    check_error("$3\r\nfoo\rX", redlock::error::resp_missing_crlf);
    check_error("$3\r\nfoo\n\r", redlock::error::resp_missing_crlf);
    check_error("$0\r\nX", redlock::error::resp_missing_crlf);
    check_error("!3\r\nERRxx", redlock::error::resp_missing_crlf);
    check_error("=5\r\ntxt:ab\n", redlock::error::resp_missing_crlf);
    // The CRLF check comes first: a bad verbatim without CRLF reports the CRLF.
    check_error("=3\r\nabcde", redlock::error::resp_missing_crlf);
}

BOOST_AUTO_TEST_CASE(invalid_type_byte_and_garbage) {
    for (std::string_view bad :
         {"X\r\n"sv, "?"sv, "\r\n"sv, "\n"sv, " +OK\r\n"sv, "hello world\r\n"sv, "\0\1\2"sv, "\xff\xfe"sv,
          ".\r\n"sv, ";4\r\nabcd\r\n"sv, "GET / HTTP/1.1\r\n"sv}) {
        check_error(bad, redlock::error::resp_invalid_type);
    }
    // The type byte of an element is checked too.
    check_error("*2\r\n:1\r\n@\r\n", redlock::error::resp_invalid_type);
}

BOOST_AUTO_TEST_CASE(bare_lf_is_a_protocol_error) {
    check_error("+OK\n", redlock::error::protocol_error);
    check_error("+\n", redlock::error::protocol_error);
    check_error(":1\n", redlock::error::protocol_error);
    check_error("$3\nfoo\r\n", redlock::error::protocol_error);
    check_error("*1\r\n+a\n", redlock::error::protocol_error);
}

BOOST_AUTO_TEST_CASE(no_crash_on_truncated_input) {
    // Every prefix of the corpus is a valid partial stream: no error, values are a prefix.
    const std::vector<value> all = corpus_values();
    for (std::size_t i = 0; i < corpus.size(); i += 7) {
        const parse_result r = parse_all(std::string_view(corpus).substr(0, i));
        BOOST_TEST(!r.error);
        BOOST_REQUIRE_LE(r.values.size(), all.size());
        BOOST_TEST((std::vector<value>(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(
                                                                      r.values.size())) == r.values));
    }
}

// ---------------------------------------------------------------- to_string

BOOST_AUTO_TEST_CASE(to_string_renders_short_readable_text) {
    using redlock::resp::to_string;
    BOOST_TEST(to_string(simple("OK")) == "\"OK\"");
    BOOST_TEST(to_string(err("ERR x")) == "(error) ERR x");
    BOOST_TEST(to_string(integer(5)) == "(integer) 5");
    BOOST_TEST(to_string(nil()) == "(nil)");
    BOOST_TEST(to_string(bulk("a\r\n\0\xff\""s)) == R"("a\r\n\x00\xff\"")");
    BOOST_TEST(to_string(arr({integer(1), bulk("x"), arr({})})) == "[(integer) 1, \"x\", []]");
    BOOST_TEST(to_string(agg(type::map, {simple("k"), integer(1)})) == "{\"k\": (integer) 1}");
    BOOST_TEST(to_string(agg(type::set, {simple("a")})) == "~[\"a\"]");
    BOOST_TEST(to_string(agg(type::push, {simple("a")})) == ">[\"a\"]");
    BOOST_TEST(to_string(boolean(true)) == "(true)");
    BOOST_TEST(to_string(dbl(1.5, "1.5")) == "(double) 1.5");
    BOOST_TEST(to_string(big("123")) == "(big number) 123");
    BOOST_TEST(to_string(verbatim("txt", "hi")) == "(verbatim txt) \"hi\"");
    BOOST_TEST(to_string(with_attributes(integer(1), {simple("a"), simple("b")})) ==
               "|{\"a\": \"b\"}| (integer) 1");
    // Huge values stay short.
    BOOST_TEST(to_string(bulk(std::string(1 << 20, 'x'))).size() < 400u);
    BOOST_TEST(to_string(arr(std::vector<value>(100000, integer(1)))).size() < 2000u);
}

BOOST_AUTO_TEST_SUITE_END()
