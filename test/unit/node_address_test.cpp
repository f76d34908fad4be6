#include <redlock/error.hpp>
#include <redlock/redis/node_address.hpp>

#include <boost/test/unit_test.hpp>

using redlock::redis::node_address;
using redlock::redis::parse_node_uri;

namespace {

node_address parse_ok(std::string_view uri) {
    node_address a;
    std::string why;
    auto ec = parse_node_uri(uri, a, why);
    BOOST_TEST_INFO("uri: " << uri << " why: " << why);
    BOOST_TEST(!ec);
    return a;
}

std::string parse_fail(std::string_view uri) {
    node_address a;
    std::string why;
    auto ec = parse_node_uri(uri, a, why);
    BOOST_TEST_INFO("uri: " << uri);
    BOOST_TEST((ec == redlock::error::invalid_uri));
    BOOST_TEST(why.find("invalid node URI") != std::string::npos);
    return why;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(node_address_suite)

BOOST_AUTO_TEST_CASE(tcp_uris) {
    auto a = parse_ok("redis://127.0.0.1:7001");
    BOOST_TEST((a.kind == node_address::transport::tcp));
    BOOST_TEST(a.host == "127.0.0.1");
    BOOST_TEST(a.port == 7001);
    BOOST_TEST(a.db == 0);
    BOOST_TEST(a.username.empty());
    BOOST_TEST(a.password.empty());

    auto b = parse_ok("redis://localhost");
    BOOST_TEST(b.host == "localhost");
    BOOST_TEST(b.port == 6379);

    auto c = parse_ok("redis://:s3cret@host:7002/3");
    BOOST_TEST(c.username.empty());
    BOOST_TEST(c.password == "s3cret");
    BOOST_TEST(c.db == 3);

    auto d = parse_ok("redis://locker:p%40ss%3Aword@host/");
    BOOST_TEST(d.username == "locker");
    BOOST_TEST(d.password == "p@ss:word");
    BOOST_TEST(d.db == 0);

    auto e = parse_ok("redis://[::1]:6380/1");
    BOOST_TEST(e.host == "::1");
    BOOST_TEST(e.port == 6380);
    BOOST_TEST(e.db == 1);

    auto f = parse_ok("rediss://host:6390");
    BOOST_TEST((f.kind == node_address::transport::tls));
}

BOOST_AUTO_TEST_CASE(unix_uris) {
    auto a = parse_ok("unix:///run/redis/redis.sock");
    BOOST_TEST((a.kind == node_address::transport::unix_socket));
    BOOST_TEST(a.path == "/run/redis/redis.sock");
    auto b = parse_ok("unix://user:pw@/tmp/r.sock?db=4");
    BOOST_TEST(b.path == "/tmp/r.sock");
    BOOST_TEST(b.username == "user");
    BOOST_TEST(b.password == "pw");
    BOOST_TEST(b.db == 4);
}

BOOST_AUTO_TEST_CASE(bad_uris_name_what_is_wrong) {
    BOOST_TEST(parse_fail("127.0.0.1:6379").find("expected redis://") != std::string::npos);
    BOOST_TEST(parse_fail("http://host").find("unknown scheme 'http'") != std::string::npos);
    BOOST_TEST(parse_fail("redis://").find("missing host") != std::string::npos);
    BOOST_TEST(parse_fail("redis://host:0").find("port must be 1-65535") != std::string::npos);
    BOOST_TEST(parse_fail("redis://host:65536").find("port must be 1-65535") != std::string::npos);
    BOOST_TEST(parse_fail("redis://host:12ab").find("port must be 1-65535") != std::string::npos);
    BOOST_TEST(parse_fail("redis://host:").find("empty port") != std::string::npos);
    BOOST_TEST(parse_fail("redis://host/x").find("database must be") != std::string::npos);
    BOOST_TEST(parse_fail("redis://host/-1").find("database must be") != std::string::npos);
    BOOST_TEST(parse_fail("redis://[::1:6379").find("unterminated IPv6") != std::string::npos);
    BOOST_TEST(parse_fail("redis://user@host").find("user:password@") != std::string::npos);
    BOOST_TEST(parse_fail("redis://u:%zz@host").find("percent-encoding") != std::string::npos);
    BOOST_TEST(parse_fail("redis://u:%4@host").find("percent-encoding") != std::string::npos);
    BOOST_TEST(parse_fail("unix://relative/path").find("must be absolute") != std::string::npos);
    BOOST_TEST(parse_fail("unix:///tmp/s?x=1").find("db=") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(messages_never_show_the_password) {
    auto why = parse_fail("redis://user:topsecret@host:99999");
    BOOST_TEST(why.find("topsecret") == std::string::npos);
    BOOST_TEST(why.find("***") != std::string::npos);
    auto a = parse_ok("redis://user:topsecret@host:7000/2");
    BOOST_TEST(a.to_string() == "redis://user:***@host:7000/2");
    BOOST_TEST(parse_ok("redis://[::1]:7000").to_string() == "redis://[::1]:7000");
    BOOST_TEST(parse_ok("unix:///tmp/r.sock").to_string() == "unix:///tmp/r.sock");
}

BOOST_AUTO_TEST_SUITE_END()
