// SPDX-License-Identifier: BSL-1.0
#include <redlock/error.hpp>
#include <redlock/redis/node_address.hpp>
#include <redlock/redis/node_spec.hpp>

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

namespace {

using redlock::redis::node_spec;
using redlock::redis::parse_node_spec;
using redlock::redis::split_node_list;

node_spec spec_ok(std::string_view uri) {
    node_spec s;
    std::string why;
    auto ec = parse_node_spec(uri, s, why);
    BOOST_TEST_INFO("uri: " << uri << " why: " << why);
    BOOST_TEST(!ec);
    return s;
}

std::string spec_fail(std::string_view uri) {
    node_spec s;
    std::string why;
    auto ec = parse_node_spec(uri, s, why);
    BOOST_TEST_INFO("uri: " << uri);
    BOOST_TEST((ec == redlock::error::invalid_uri));
    BOOST_TEST(why.find("invalid node URI") != std::string::npos);
    return why;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(node_spec_suite)

BOOST_AUTO_TEST_CASE(one_server_uris_are_servers) {
    for (auto uri : {"redis://127.0.0.1:7001", "rediss://h:1/2", "unix:///tmp/r.sock"}) {
        auto s = spec_ok(uri);
        BOOST_TEST((s.kind == node_spec::topology::server));
        BOOST_REQUIRE(s.addresses.size() == 1u);
        node_address a;
        std::string why;
        BOOST_TEST(!parse_node_uri(uri, a, why));
        BOOST_TEST((s.addresses.front() == a));
        BOOST_TEST(s.to_string() == a.to_string());
    }
}

BOOST_AUTO_TEST_CASE(cluster_uris_list_seed_nodes_with_one_login) {
    auto s = spec_ok("redis-cluster://app:p%40ss@10.0.0.1:7000,10.0.0.2:7001,[::1]:7002");
    BOOST_TEST((s.kind == node_spec::topology::cluster));
    BOOST_REQUIRE(s.addresses.size() == 3u);
    BOOST_TEST(s.addresses[0].host == "10.0.0.1");
    BOOST_TEST(s.addresses[0].port == 7000);
    BOOST_TEST(s.addresses[2].host == "::1");
    BOOST_TEST(s.addresses[2].port == 7002);
    for (const auto& a : s.addresses) {
        BOOST_TEST((a.kind == node_address::transport::tcp));
        BOOST_TEST(a.username == "app");
        BOOST_TEST(a.password == "p@ss");
        BOOST_TEST(a.db == 0);
    }
    BOOST_TEST(s.to_string() == "redis-cluster://app:***@10.0.0.1:7000,10.0.0.2:7001,[::1]:7002");

    auto tls = spec_ok("rediss-cluster://h:7000/0");
    BOOST_TEST((tls.kind == node_spec::topology::cluster));
    BOOST_TEST((tls.addresses.front().kind == node_address::transport::tls));
    BOOST_TEST(tls.to_string() == "rediss-cluster://h:7000");
    BOOST_TEST(spec_ok("redis-cluster://:pw@h:1").addresses.front().password == "pw");
}

BOOST_AUTO_TEST_CASE(sentinel_uris_name_the_master) {
    auto s = spec_ok("redis-sentinel://:pw@127.0.0.1:26379,127.0.0.1:26380/3#mymaster");
    BOOST_TEST((s.kind == node_spec::topology::sentinel));
    BOOST_TEST(s.master_name == "mymaster");
    BOOST_REQUIRE(s.addresses.size() == 2u);
    BOOST_TEST(s.addresses[1].port == 26380);
    BOOST_TEST(s.addresses[1].db == 3);
    BOOST_TEST(s.addresses[1].password == "pw");
    BOOST_TEST(s.to_string() == "redis-sentinel://:***@127.0.0.1:26379,127.0.0.1:26380/3#mymaster");
    BOOST_TEST(spec_ok("redis-sentinel://h:26379#m").to_string() == "redis-sentinel://h:26379#m");
    BOOST_TEST((s.addresses[0].kind == node_address::transport::tcp));
}

// TLS to the sentinels, and (the transport of the master's address) to the master they name.
BOOST_AUTO_TEST_CASE(rediss_sentinel_uris_speak_tls) {
    auto s = spec_ok("rediss-sentinel://127.0.0.1:26379,127.0.0.1:26380#mymaster");
    BOOST_TEST((s.kind == node_spec::topology::sentinel));
    BOOST_REQUIRE(s.addresses.size() == 2u);
    for (const auto& a : s.addresses)
        BOOST_TEST((a.kind == node_address::transport::tls));
    BOOST_TEST(s.to_string() == "rediss-sentinel://127.0.0.1:26379,127.0.0.1:26380#mymaster");
    BOOST_TEST((split_node_list("rediss-sentinel://h:1,h:2#m,redis://x:3") ==
                std::vector<std::string>{"rediss-sentinel://h:1,h:2#m", "redis://x:3"}));
}

BOOST_AUTO_TEST_CASE(bad_cluster_and_sentinel_uris_name_what_is_wrong) {
    BOOST_TEST(spec_fail("redis-cluster://h:7000/1").find("only database 0") != std::string::npos);
    BOOST_TEST(spec_fail("redis-cluster://h:7000#m").find("no #fragment") != std::string::npos);
    BOOST_TEST(spec_fail("redis-cluster://").find("no host:port") != std::string::npos);
    BOOST_TEST(spec_fail("redis-cluster://h:1,,h:2").find("host 2 is empty") != std::string::npos);
    BOOST_TEST(spec_fail("redis-cluster://h:1,h2").find("host 2 ('h2') needs a port") != std::string::npos);
    BOOST_TEST(spec_fail("redis-cluster://[::1]").find("needs a port") != std::string::npos);
    BOOST_TEST(spec_fail("redis-cluster://h:1,h:99999").find("host 2: the port must be 1-65535") !=
               std::string::npos);
    BOOST_TEST(spec_fail("redis-cluster://h:1,h:1").find("host 2 is host 1 again") != std::string::npos);
    BOOST_TEST(spec_fail("redis-sentinel://h:26379").find("#<master name>") != std::string::npos);
    BOOST_TEST(spec_fail("redis-sentinel://h:26379#").find("#<master name>") != std::string::npos);
    BOOST_TEST(spec_fail("redis-sentinel://h:26379/x#m").find("database must be") != std::string::npos);
    BOOST_TEST(spec_fail("redis-cluster://user@h:1").find("credentials") != std::string::npos);
    const auto masked = spec_fail("redis-cluster://u:secret@h:1,h");
    BOOST_TEST(masked.find("secret") == std::string::npos);
    BOOST_TEST(masked.find("u:***@h:1,h") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_one_server_parse_refuses_cluster_and_sentinel_uris) {
    node_address a;
    std::string why;
    BOOST_TEST((parse_node_uri("redis-cluster://h:1", a, why) == redlock::error::invalid_uri));
    BOOST_TEST(why.find("names a cluster or a Sentinel deployment") != std::string::npos);
    BOOST_TEST((parse_node_uri("rediss-sentinel://h:1#m", a, why) == redlock::error::invalid_uri));
}

BOOST_AUTO_TEST_SUITE_END()
