// SPDX-License-Identifier: BSL-1.0
// rediss:// against `redis-server --tls-port`, with a CA, server and client certificates the
// test makes with the `openssl` command at run time: verification by CA and by name (SNI),
// client certificates, clear tls_failed errors, and never a fallback to plaintext.
#include "support/child_process.hpp"
#include "support/lock_helpers.hpp"
#include "support/redis_sentinel.hpp"
#include "support/redis_server.hpp"
#include "support/run_coro.hpp"
#include "support/scratch_dir.hpp"
#include <redlock/redis/connection.hpp>
#include <redlock/redlock.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <fstream>
#include <string>

namespace asio = boost::asio;
using namespace std::chrono_literals;
using boost::system::error_code;
using redlock::redis::connection;
using redlock::redis::connection_config;
using redlock::test::redis_server;
using redlock::test::run_coro;
using redlock::test::scratch_dir;

namespace {

constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);

void sh(const std::string& command) {
    const int rc = std::system((command + " >/dev/null 2>&1").c_str());
    BOOST_TEST_REQUIRE(rc == 0, "failed: " << command);
}

// A CA, a server certificate for localhost and 127.0.0.1 signed by it, a client certificate
// signed by it, and a second CA that signed nothing of ours. EC keys: quick to make.
struct certificates {
    scratch_dir dir;
    std::string ca, ca_key, server, server_key, client, client_key, other_ca, other_ca_key;

    certificates() {
        ca = dir.file("ca.crt");
        ca_key = dir.file("ca.key");
        other_ca = dir.file("other_ca.crt");
        other_ca_key = dir.file("other_ca.key");
        server = dir.file("server.crt");
        server_key = dir.file("server.key");
        client = dir.file("client.crt");
        client_key = dir.file("client.key");
        const std::string new_key = "openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
        sh(new_key + " -x509 -days 2 -subj '/CN=redlock test CA' -keyout " + ca_key + " -out " + ca);
        sh(new_key + " -x509 -days 2 -subj '/CN=someone else' -keyout " + other_ca_key + " -out " + other_ca);
        sign("server", "subjectAltName=DNS:localhost,IP:127.0.0.1", server, server_key);
        sign("client", "extendedKeyUsage=clientAuth", client, client_key);
    }

    void sign(const std::string& name, const std::string& extension, const std::string& cert,
              const std::string& key) {
        const auto csr = dir.file(name + ".csr");
        const auto ext = dir.file(name + ".ext");
        sh("openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj '/CN=" + name +
           "' -keyout " + key + " -out " + csr);
        std::ofstream(ext) << extension << "\n";
        sh("openssl x509 -req -days 2 -in " + csr + " -CA " + ca + " -CAkey " + ca_key +
           " -CAcreateserial -out " + cert + " -extfile " + ext);
    }

    // The options of a server that speaks TLS on tls_port() (and plaintext on port(), for the
    // fixture) with the server certificate. `clients`: tls-auth-clients (no, optional or yes).
    [[nodiscard]] redlock::test::redis_server_options server_options(const std::string& clients) const {
        redlock::test::redis_server_options o;
        o.tls = true;
        o.extra_args = {"--tls-cert-file",    server, "--tls-key-file",     server_key,
                        "--tls-ca-cert-file", ca,     "--tls-auth-clients", clients};
        return o;
    }

    [[nodiscard]] std::unique_ptr<redis_server> server_with(const std::string& clients) const {
        return std::make_unique<redis_server>(server_options(clients));
    }
};

connection_config config_for(const std::string& uri, const redlock::tls_config& tls) {
    connection_config cfg;
    std::string why;
    BOOST_TEST_REQUIRE(!redlock::redis::parse_node_uri(uri, cfg.address, why), why);
    cfg.tls = tls;
    cfg.connect_timeout = 2s;
    return cfg;
}

// Connects once and returns the outcome with the connection's message and whether its failure
// is one another attempt meets again (connection_error::permanent).
struct connect_outcome {
    error_code ec;
    std::string message;
    bool permanent = false;
};
connect_outcome try_connect(const connection_config& cfg) {
    asio::io_context ioc;
    connection conn(ioc.get_executor(), cfg);
    error_code result;
    std::string message;
    bool permanent = false;
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto [ec] = co_await conn.async_connect(tuple_awaitable);
        result = ec;
        message = conn.last_error().message;
        permanent = conn.last_error().permanent;
        if (!ec) {
            redlock::resp::request ping;
            ping.push("PING");
            auto [pec, replies] = co_await conn.async_exec(ping, 2s, tuple_awaitable);
            BOOST_TEST(!pec, pec.message());
            if (!pec) BOOST_TEST(replies.at(0).str == "PONG");
        }
        conn.close();
    }());
    return {result, message, permanent};
}

void expect_connects(const connection_config& cfg) {
    auto [ec, message, permanent] = try_connect(cfg);
    BOOST_TEST(!ec, ec.message() << ": " << message);
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

// Connecting fails with tls_failed, and the connection's message gives `reason`. Each of these
// failures comes again at the next attempt: the connection says so (permanent), so that a
// waiting acquire ends at once.
void expect_tls_failed(const connection_config& cfg, const std::string& reason) {
    auto [ec, message, permanent] = try_connect(cfg);
    BOOST_TEST((ec == redlock::error::tls_failed), ec.message());
    BOOST_TEST(contains(message, reason), message);
    BOOST_TEST(permanent, message);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(tls_test)

BOOST_AUTO_TEST_CASE(locks_over_tls_with_the_ca_and_a_client_certificate) {
    certificates certs;
    auto server = certs.server_with("yes");
    redlock::client_config cfg;
    cfg.nodes = {server->tls_uri()};
    cfg.restart_quarantine = false;
    cfg.tls.ca_file = certs.ca;
    cfg.tls.cert_file = certs.client;
    cfg.tls.key_file = certs.client_key;
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), cfg);
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        redlock::lock_options o;
        o.ttl = 5s;
        redlock::diagnostics diag;
        auto [ec, lease] = co_await client.async_acquire("tls", o, diag, tuple_awaitable);
        BOOST_TEST_REQUIRE(!ec, ec.message() << ": " << diag.message);
        // The key is there, as the plaintext port of the same server shows.
        BOOST_TEST(redlock::test::holder_on(*server, "tls") == lease.token());
        auto [rec] = co_await lease.async_release(tuple_awaitable);
        BOOST_TEST(!rec, rec.message());
        BOOST_TEST(server->command({"EXISTS", redlock::test::lock_key("tls")}).integer == 0);
    }());
}

// Two TLS nodes whose servers' certificates come from different CAs: each node's object form
// (client_config::per_node) names its own CA; the config's tls, another CA, applies to neither.
BOOST_AUTO_TEST_CASE(each_node_may_have_tls_settings_of_its_own) {
    certificates certs;
    certificates others;
    auto ours = certs.server_with("no");
    auto theirs = others.server_with("no");
    redlock::client_config cfg;
    cfg.nodes = {ours->tls_uri(), theirs->tls_uri()};
    cfg.restart_quarantine = false;
    cfg.tls.ca_file = certs.other_ca;  // trusts neither server
    cfg.per_node.resize(2);
    cfg.per_node[0].tls = redlock::tls_config{};
    cfg.per_node[0].tls->ca_file = certs.ca;
    cfg.per_node[1].tls = redlock::tls_config{};
    cfg.per_node[1].tls->ca_file = others.ca;
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), cfg);
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        redlock::lock_options o;
        o.ttl = 5s;
        redlock::diagnostics diag;
        auto [ec, lease] = co_await client.async_acquire("per-node-tls", o, diag, tuple_awaitable);
        BOOST_TEST_REQUIRE(!ec, ec.message() << ": " << diag.message);
        // N = 2, quorum 2: both granted, each trusted through its own CA.
        BOOST_TEST(diag.nodes.size() == 2u);
        BOOST_TEST(redlock::test::holder_on(*ours, "per-node-tls") == lease.token());
        BOOST_TEST(redlock::test::holder_on(*theirs, "per-node-tls") == lease.token());
        co_await lease.async_release(asio::use_awaitable);
    }());
}

// rediss-sentinel://: the sentinels are asked over TLS, the master they name is reached over
// TLS on the port they name, and their +switch-master comes over TLS too.
BOOST_AUTO_TEST_CASE(a_sentinel_node_over_tls_finds_the_master_and_follows_a_failover) {
    certificates certs;
    redlock::test::redis_sentinel_options o;
    o.server = certs.server_options("no");
    redlock::test::redis_sentinel_group group(o);
    BOOST_TEST(group.uri().starts_with("rediss-sentinel://"));
    redlock::client_config cfg;
    cfg.nodes = {group.uri()};
    // The failovers' quarantines are sentinel_lock_test's.
    cfg.restart_quarantine = false;
    cfg.failover_quarantine = false;
    cfg.tls.ca_file = certs.ca;
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), cfg);
    const auto acquire_on = [&](const std::string& resource, redlock::test::redis_server& master) {
        run_coro(ioc, [&]() -> asio::awaitable<void> {
            redlock::lock_options lo;
            lo.ttl = 5s;
            lo.wait = 10s;  // while the client moves to a new master
            redlock::diagnostics diag;
            auto [ec, lease] = co_await client.async_acquire(resource, lo, diag, tuple_awaitable);
            BOOST_TEST_REQUIRE(!ec, ec.message() << ": " << diag.message);
            BOOST_TEST(redlock::test::holder_on(master, resource) == lease.token());
            co_await lease.async_release(asio::use_awaitable);
        }());
        BOOST_TEST(client.metrics().nodes.at(0).sentinel_master ==
                   "127.0.0.1:" + std::to_string(master.tls_port()));
    };
    acquire_on("tls-sentinel", group.master());
    auto& promoted = group.failover();
    acquire_on("tls-sentinel-after", promoted);
    BOOST_TEST(client.metrics().nodes.at(0).sentinel_switches >= 1u);
}

BOOST_AUTO_TEST_CASE(a_certificate_from_another_ca_is_tls_failed_with_the_reason) {
    certificates certs;
    auto server = certs.server_with("no");
    redlock::tls_config tls;
    tls.ca_file = certs.other_ca;
    expect_tls_failed(config_for(server->tls_uri(), tls), "certificate verify failed");
    // Nothing reached the server as a command.
    BOOST_TEST(!contains(server->command({"INFO", "commandstats"}).str, "cmdstat_hello"));

    // The acquire names the cause too.
    redlock::client_config cfg;
    cfg.nodes = {server->tls_uri()};
    cfg.restart_quarantine = false;
    cfg.tls = tls;
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), cfg);
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        // A wait does not help: the acquire ends after its first round, with the failure's own code.
        redlock::diagnostics diag;
        redlock::lock_options o;
        o.wait = 30s;
        const auto started = std::chrono::steady_clock::now();
        auto [aec, lease] = co_await client.async_acquire("tls", o, diag, tuple_awaitable);
        BOOST_TEST((aec == redlock::error::tls_failed), aec.message());
        BOOST_TEST((std::chrono::steady_clock::now() - started < 30s));
        BOOST_TEST(contains(diag.message, "certificate verify failed"), diag.message);
    }());
}

#ifdef REDLOCK_COMMAND_PATH
// Through the command: `redlock run` does not wait out --wait for a certificate that will not
// verify; it exits 78 (refused) at once, with the reason.
BOOST_AUTO_TEST_CASE(redlock_run_ends_its_wait_at_a_certificate_that_does_not_verify) {
    certificates certs;
    auto server = certs.server_with("no");
    const auto config = certs.dir.file("other_ca.json");
    std::ofstream(config) << "{\"nodes\": [\"" << server->tls_uri()
                          << "\"], \"restart_quarantine\": false, \"tls\": {\"ca_file\": \"" << certs.other_ca
                          << "\"}}";
    const auto out = certs.dir.file("out");
    const auto started = std::chrono::steady_clock::now();
    const auto pid = redlock::test::spawn_shell(
        std::string(REDLOCK_COMMAND_PATH) + " run --config " + config + " --wait 30s job -- true", out);
    BOOST_TEST(redlock::test::wait_child(pid, 60s) == 78, redlock::test::read_file(out));
    BOOST_TEST((std::chrono::steady_clock::now() - started < 30s));
    const auto said = redlock::test::read_file(out);
    BOOST_TEST(contains(said, "not acquired (tls_failed)"), said);
    BOOST_TEST(contains(said, "certificate verify failed"), said);
}
#endif

BOOST_AUTO_TEST_CASE(the_name_is_checked_and_sent_as_sni) {
    certificates certs;
    auto server = certs.server_with("no");
    redlock::tls_config tls;
    tls.ca_file = certs.ca;
    // 127.0.0.1 is in the certificate: the URI's host is the name checked.
    expect_connects(config_for(server->tls_uri(), tls));
    // A DNS name in the certificate.
    tls.server_name = "localhost";
    expect_connects(config_for(server->tls_uri(), tls));
    // A name that is not.
    tls.server_name = "redis.example.com";
    expect_tls_failed(config_for(server->tls_uri(), tls), "redis.example.com");
    // verify = false accepts it (and a certificate from any CA): an explicit opt-out.
    tls.verify = false;
    tls.ca_file = certs.other_ca;
    expect_connects(config_for(server->tls_uri(), tls));
}

BOOST_AUTO_TEST_CASE(a_server_that_requires_a_client_certificate_refuses_a_client_without) {
    certificates certs;
    auto server = certs.server_with("yes");
    redlock::tls_config tls;
    tls.ca_file = certs.ca;
    // An alert ("certificate required") or, when the server closes first, a reset: either way
    // tls_failed, with a hint.
    expect_tls_failed(config_for(server->tls_uri(), tls), "client certificate");
    tls.cert_file = certs.client;
    tls.key_file = certs.client_key;
    expect_connects(config_for(server->tls_uri(), tls));
}

BOOST_AUTO_TEST_CASE(rediss_to_a_plaintext_port_fails_and_never_falls_back) {
    certificates certs;
    auto server = certs.server_with("no");
    redlock::tls_config tls;
    tls.ca_file = certs.ca;
    auto uri = server->uri();
    uri.replace(0, std::string("redis://").size(), "rediss://");
    auto cfg = config_for(uri, tls);
    cfg.connect_timeout = 500ms;
    auto [ec, message, permanent] = try_connect(cfg);
    // The server waits for the end of a line that a ClientHello does not have; our handshake
    // waits for a ServerHello: the connect timeout ends it.
    BOOST_TEST((ec == redlock::error::connect_timeout), ec.message());
    BOOST_TEST(contains(message, "TLS handshake"), message);
    BOOST_TEST(!contains(server->command({"INFO", "commandstats"}).str, "cmdstat_hello"));
}

BOOST_AUTO_TEST_CASE(unreadable_certificate_files_are_named) {
    redlock::tls_config tls;
    tls.ca_file = "/nonexistent/ca.pem";
    certificates certs;
    auto server = certs.server_with("no");
    expect_tls_failed(config_for(server->tls_uri(), tls), "tls.ca_file \"/nonexistent/ca.pem\"");
    tls.ca_file = certs.ca;
    tls.cert_file = certs.client;
    tls.key_file = certs.ca_key;  // not the certificate's key
    expect_tls_failed(config_for(server->tls_uri(), tls), "tls.key_file");
}

BOOST_AUTO_TEST_SUITE_END()
