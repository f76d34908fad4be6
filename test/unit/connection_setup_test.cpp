// SPDX-License-Identifier: BSL-1.0
// What a connection does before its first request, without a socket or a server: the
// handshake's requests and what scripted answers mean (src/redis/handshake.hpp), the TLS set-up
// (tls_setup.hpp), the reconnect delays (reconnect_delay.hpp) and a script's EVALSHA and its
// EVAL fallback (script_call.hpp).
#include "redis/handshake.hpp"
#include "redis/reconnect_delay.hpp"
#include "redis/script_call.hpp"
#include "redis/tls_setup.hpp"
#include "support/printing.hpp"
#include "support/resp_values.hpp"
#include <redlock/error.hpp>
#include <redlock/resp/request.hpp>

#include <boost/asio/error.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/test/unit_test.hpp>

#include <random>
#include <string>
#include <utility>
#include <vector>

namespace redis = redlock::redis;
namespace resp = redlock::resp;
using redlock::redis::detail::auth_request;
using redlock::redis::detail::hello_request;
using redlock::redis::detail::read_auth;
using redlock::redis::detail::read_hello;
using redlock::redis::detail::setup_plan;
using redlock::test::error_reply;

namespace {

resp::value text_reply(std::string text, resp::type kind = resp::type::bulk_string) {
    resp::value v;
    v.kind = kind;
    v.str = std::move(text);
    return v;
}

redis::node_address address(std::string user, std::string password, int db = 0) {
    redis::node_address a;
    a.host = "h";
    a.port = 7000;
    a.username = std::move(user);
    a.password = std::move(password);
    a.db = db;
    return a;
}

constexpr redis::script script_a{"a", "1111111111111111111111111111111111111111", "return 1"};
constexpr redis::script script_b{"b", "2222222222222222222222222222222222222222", "return 2"};

}  // namespace

BOOST_AUTO_TEST_SUITE(connection_setup)

BOOST_AUTO_TEST_CASE(hello_carries_the_credentials_and_falls_back_to_resp2) {
    BOOST_TEST(hello_request(address("", "")).payload() == "*2\r\n$5\r\nHELLO\r\n$1\r\n3\r\n");
    BOOST_TEST(hello_request(address("", "pw")).payload() ==
               "*5\r\n$5\r\nHELLO\r\n$1\r\n3\r\n$4\r\nAUTH\r\n$7\r\ndefault\r\n$2\r\npw\r\n");
    BOOST_TEST(hello_request(address("u", "pw")).payload().find("$1\r\nu\r\n") != std::string::npos);

    resp::value map;
    map.kind = resp::type::map;
    auto ok = read_hello(map, "redis://h:7000");
    BOOST_TEST(ok.protocol == 3);
    BOOST_TEST(!ok.failure.ec);
    for (const auto* old :
         {"ERR unknown command 'HELLO', with args beginning with: '3'", "NOPROTO unsupported"}) {
        auto r2 = read_hello(error_reply(old), "redis://h:7000");
        BOOST_TEST(r2.protocol == 2, old);
        BOOST_TEST(!r2.failure.ec, old);
    }
    // RESP2 sends AUTH on its own, with the user when there is one.
    BOOST_TEST(auth_request(address("", "")).empty());
    BOOST_TEST(auth_request(address("", "pw")).payload() == "*2\r\n$4\r\nAUTH\r\n$2\r\npw\r\n");
    BOOST_TEST(auth_request(address("u", "pw")).payload() == "*3\r\n$4\r\nAUTH\r\n$1\r\nu\r\n$2\r\npw\r\n");
    BOOST_TEST(!read_auth(text_reply("OK", resp::type::simple_string), "n").ec);
    const auto refused = read_auth(error_reply("WRONGPASS invalid username-password pair"), "redis://h:7000");
    BOOST_TEST((refused.ec == redlock::error::auth_failed));
    BOOST_TEST(refused.message == "AUTH on redis://h:7000 failed: WRONGPASS invalid username-password pair");
}

BOOST_AUTO_TEST_CASE(a_refused_hello_says_why) {
    const auto wrong = read_hello(error_reply("WRONGPASS invalid username-password pair"), "redis://h:7000");
    BOOST_TEST((wrong.failure.ec == redlock::error::auth_failed));
    BOOST_TEST(wrong.failure.message ==
               "HELLO on redis://h:7000 failed: WRONGPASS invalid username-password pair");
    BOOST_TEST(
        (read_hello(error_reply("NOAUTH HELLO must be called with the client already authenticated"), "n")
             .failure.ec == redlock::error::auth_failed));
    BOOST_TEST((read_hello(error_reply("LOADING Redis is loading the dataset in memory"), "n").failure.ec ==
                redlock::error::handshake_failed));
    // Refused for good (no wait helps), or for now.
    BOOST_TEST(wrong.failure.permanent);
    BOOST_TEST(
        !read_hello(error_reply("LOADING Redis is loading the dataset in memory"), "n").failure.permanent);
    const auto odd = read_hello(text_reply("hi", resp::type::simple_string), "redis://h:7000");
    BOOST_TEST((odd.failure.ec == redlock::error::unexpected_reply));
    BOOST_TEST(odd.failure.message.find("HELLO on redis://h:7000 returned") == 0u, odd.failure.message);
}

BOOST_AUTO_TEST_CASE(a_server_older_than_the_floor_fails_the_hello_naming_its_version) {
    auto hello_of = [](const std::string& version) {
        resp::value map;
        map.kind = resp::type::map;
        for (const auto& [k, v] : std::vector<std::pair<std::string, std::string>>{
                 {"server", "redis"}, {"version", version}, {"proto", "3"}}) {
            map.elements.push_back(text_reply(k, resp::type::bulk_string));
            map.elements.push_back(text_reply(v, resp::type::bulk_string));
        }
        return map;
    };
    const auto old = read_hello(hello_of("6.2.14"), "redis://h:7000", "7.0");
    BOOST_TEST((old.failure.ec == redlock::error::handshake_failed));
    BOOST_TEST(old.failure.message ==
               "redis://h:7000 runs Redis 6.2.14, older than the 7.0 this client needs");
    BOOST_TEST(old.failure.permanent);
    // Compared as numbers, not as text; no floor, or no version said: not checked.
    for (const auto* fine : {"7.0.0", "7.0.15", "7.2.4", "10.0.1"})
        BOOST_TEST(!read_hello(hello_of(fine), "n", "7.0").failure.ec, fine);
    BOOST_TEST(!read_hello(hello_of("6.2.14"), "n").failure.ec);
    BOOST_TEST(!read_hello(hello_of("unknown"), "n", "7.0").failure.ec);
    resp::value bare;
    bare.kind = resp::type::map;
    BOOST_TEST(!read_hello(bare, "n", "7.0").failure.ec);
}

BOOST_AUTO_TEST_CASE(the_setup_is_one_write_and_each_reply_is_read_in_its_place) {
    redis::connection_config cfg;
    cfg.address = address("", "", 2);
    cfg.client_name = "me";
    cfg.on_server_info = [](std::string_view) {};
    cfg.setup_commands = {{"EVAL", "return 7", "0"}, {}};
    cfg.scripts = {script_a, script_b};
    const setup_plan plan(cfg);
    // SELECT, CLIENT SETNAME, INFO server, the caller's EVAL (the empty command is skipped), two loads.
    BOOST_TEST_REQUIRE(plan.request().size() == 6u);
    const auto& bytes = plan.request().payload();
    BOOST_TEST(bytes.find("SELECT") < bytes.find("SETNAME"));
    BOOST_TEST(bytes.find("SETNAME") < bytes.find("INFO"));
    BOOST_TEST(bytes.find("INFO") < bytes.find("EVAL"));
    BOOST_TEST(bytes.find("EVAL") < bytes.find("return 1"));

    std::vector<resp::value> replies = {text_reply("OK", resp::type::simple_string),
                                        text_reply("OK", resp::type::simple_string),
                                        text_reply("run_id:abc"),
                                        error_reply("NOPERM no eval"),  // the caller's: not ours to judge
                                        text_reply(std::string(script_a.sha1)),
                                        text_reply(std::string(script_b.sha1))};
    BOOST_TEST(!plan.check(replies, "n").ec);
    BOOST_TEST(plan.server_info(replies) == "run_id:abc");
    const auto theirs = plan.setup_replies(replies);
    BOOST_TEST_REQUIRE(theirs.size() == 1u);
    BOOST_TEST(theirs[0].str == "NOPERM no eval");

    auto bad_db = replies;
    bad_db[0] = error_reply("ERR DB index is out of range");
    const auto db = plan.check(bad_db, "redis://h:7000/2");
    BOOST_TEST((db.ec == redlock::error::handshake_failed));
    BOOST_TEST(db.permanent);
    BOOST_TEST(db.message == "SELECT 2 on redis://h:7000/2 failed: ERR DB index is out of range");

    auto no_setname = replies;
    no_setname[1] = error_reply("NOPERM this user has no permissions to run the 'client|setname' command");
    BOOST_TEST((plan.check(no_setname, "n").ec == redlock::error::auth_failed));
    BOOST_TEST(plan.check(no_setname, "n").permanent);
    auto loading = replies;
    loading[4] = error_reply("LOADING Redis is loading the dataset in memory");
    BOOST_TEST((plan.check(loading, "n").ec == redlock::error::handshake_failed));
    BOOST_TEST(!plan.check(loading, "n").permanent);

    auto other_sha = replies;
    other_sha[5] = text_reply("3333333333333333333333333333333333333333");
    const auto sha = plan.check(other_sha, "n");
    BOOST_TEST((sha.ec == redlock::error::handshake_failed));
    BOOST_TEST(sha.message.find("SCRIPT LOAD b on n returned") == 0u, sha.message);
    BOOST_TEST(sha.message.find("expected 2222222222222222222222222222222222222222") != std::string::npos);

    replies.pop_back();
    BOOST_TEST((plan.check(replies, "n").ec == redlock::error::unexpected_reply));
}

// The server's words that no retry changes, and those that pass.
BOOST_AUTO_TEST_CASE(a_refusal_that_stays_is_told_from_one_that_passes) {
    using redlock::redis::detail::is_permanent_refusal;
    for (const char* stays :
         {"WRONGPASS invalid username-password pair or user is disabled.", "NOAUTH Authentication required.",
          "NOPERM User noset has no permissions to run the 'set' command",
          "ERR unknown command 'SET', with args beginning with: ",
          "ERR unknown subcommand 'LOAD'. Try SCRIPT HELP.", "ERR DB index is out of range",
          "ERR AUTH <password> called without any password configured for the default user.",
          "ERR The user executing the script can't run this command or subcommand script: "
          "abc, on @user_script:14."})
        BOOST_TEST(is_permanent_refusal(stays), stays);
    for (const char* passes :
         {"LOADING Redis is loading the dataset in memory", "BUSY Redis is busy running a script.",
          "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.",
          "OOM command not allowed when used memory > 'maxmemory'.",
          "READONLY You can't write against a read only replica.",
          "TRYAGAIN Multiple keys request during rehashing of slot", "ERR wrong number of arguments"})
        BOOST_TEST(!is_permanent_refusal(passes), passes);
    BOOST_TEST(!is_permanent_refusal(text_reply("ERR unknown command", resp::type::simple_string)));
}

BOOST_AUTO_TEST_CASE(a_plain_connection_has_only_its_scripts_to_set_up) {
    redis::connection_config cfg;
    cfg.client_name.clear();
    BOOST_TEST(setup_plan(cfg).request().empty());
    cfg.scripts = {script_a};
    const setup_plan plan(cfg);
    BOOST_TEST(plan.request().size() == 1u);
    const std::vector<resp::value> replies = {text_reply(std::string(script_a.sha1))};
    BOOST_TEST(!plan.check(replies, "n").ec);
    BOOST_TEST(plan.server_info(replies).empty());
    BOOST_TEST(plan.setup_replies(replies).empty());
}

BOOST_AUTO_TEST_CASE(reconnect_delays_double_up_to_the_max_with_jitter) {
    using namespace std::chrono_literals;
    using redlock::redis::detail::reconnect_delay;
    std::minstd_rand rng(7);
    for (int i = 0; i < 200; ++i) {
        const auto first = reconnect_delay(100ms, 2000ms, 1, rng);
        BOOST_TEST((first >= 50ms && first <= 100ms));
        const auto third = reconnect_delay(100ms, 2000ms, 3, rng);
        BOOST_TEST((third >= 200ms && third <= 400ms));
        const auto late = reconnect_delay(100ms, 2000ms, 40, rng);
        BOOST_TEST((late >= 1000ms && late <= 2000ms));
        BOOST_TEST((reconnect_delay(0ms, 0ms, 1, rng) <= 1ms));       // a min of 0 counts as 1 ms
        BOOST_TEST((reconnect_delay(300ms, 10ms, 5, rng) <= 300ms));  // a max below the min is the min
    }
}

BOOST_AUTO_TEST_CASE(tls_setup_names_the_file_and_what_a_failure_is) {
    redlock::tls_config t;
    t.ca_file = "/nonexistent/ca.pem";
    std::string why;
    BOOST_TEST(!redlock::redis::detail::make_tls_context(t, why));
    BOOST_TEST(why.find("tls.ca_file \"/nonexistent/ca.pem\"") == 0u, why);
    t.ca_file.clear();
    t.verify = false;
    BOOST_TEST(redlock::redis::detail::make_tls_context(t, why) != nullptr);
    t.cert_file = "/nonexistent/cert.pem";
    BOOST_TEST(!redlock::redis::detail::make_tls_context(t, why));
    BOOST_TEST(why.find("tls.cert_file") == 0u, why);

    BOOST_TEST(redlock::redis::detail::tls_peer_name(t, address("", "")) == "h");
    t.server_name = "redis.example";
    BOOST_TEST(redlock::redis::detail::tls_peer_name(t, address("", "")) == "redis.example");

    using redlock::redis::detail::is_tls_refusal;
    BOOST_TEST(is_tls_refusal(boost::asio::error::eof));
    BOOST_TEST(is_tls_refusal(boost::asio::ssl::error::stream_truncated));
    BOOST_TEST(is_tls_refusal(boost::asio::error::connection_reset));
    BOOST_TEST(!is_tls_refusal(boost::asio::error::operation_aborted));
    BOOST_TEST(!is_tls_refusal(redlock::error::unexpected_reply));
}

BOOST_AUTO_TEST_CASE(a_script_runs_by_evalsha_and_once_by_eval_with_the_same_keys_and_arguments) {
    const redis::script s{"demo", "0123456789abcdef0123456789abcdef01234567", "return {KEYS[1], ARGV[2]}"};
    // Binary-safe: CR, LF and NUL in a key or an argument are copied as they are.
    const std::string_view keys[] = {"{app:r}:lock", std::string_view("a\r\nb\0c", 6)};
    const std::string_view args[] = {"tok", "", "3000"};
    const auto evalsha = redlock::redis::detail::evalsha_payload(s, keys, args);
    resp::request expected_evalsha;
    expected_evalsha.push("EVALSHA", s.sha1, 2, keys[0], keys[1], args[0], args[1], args[2]);
    BOOST_TEST(evalsha == expected_evalsha.payload());
    resp::request expected_eval;
    expected_eval.push("EVAL", s.source, 2, keys[0], keys[1], args[0], args[1], args[2]);
    BOOST_TEST(redlock::redis::detail::eval_payload(s, evalsha) == expected_eval.payload());
    // No keys, no arguments.
    const auto bare = redlock::redis::detail::evalsha_payload(s, {}, {});
    resp::request expected_bare;
    expected_bare.push("EVAL", s.source, 0);
    BOOST_TEST(redlock::redis::detail::eval_payload(s, bare) == expected_bare.payload());

    BOOST_TEST(redlock::redis::detail::lacks_script(error_reply("NOSCRIPT No matching script. Use EVAL.")));
    BOOST_TEST(!redlock::redis::detail::lacks_script(error_reply("ERR Error running script")));
}

BOOST_AUTO_TEST_CASE(a_server_that_must_be_the_master_is_asked_its_role) {
    redis::connection_config cfg;
    cfg.require_master = true;
    const setup_plan plan(cfg);
    BOOST_TEST_REQUIRE(plan.request().size() == 2u);  // CLIENT SETNAME, ROLE
    BOOST_TEST(plan.request().payload().find("ROLE") != std::string::npos);
    auto role = [](std::vector<std::string> fields) {
        resp::value v;
        v.kind = resp::type::array;
        for (auto& f : fields)
            v.elements.push_back(text_reply(std::move(f)));
        return v;
    };
    const auto ok = text_reply("OK", resp::type::simple_string);
    BOOST_TEST(!plan.check({ok, role({"master", "0"})}, "n").ec);
    // A demoted master (Sentinel turned it into a replica), a sentinel, an error: not a master.
    const auto replica = plan.check({ok, role({"slave", "127.0.0.1", "7000", "connected"})}, "redis://h:1");
    BOOST_TEST((replica.ec == redlock::error::master_not_found));
    BOOST_TEST(replica.message.find("ROLE on redis://h:1 says [\"slave\"") == 0, replica.message);
    BOOST_TEST(replica.message.find("it is not a master (any more)") != std::string::npos, replica.message);
    BOOST_TEST((plan.check({ok, role({"sentinel"})}, "n").ec == redlock::error::master_not_found));
    BOOST_TEST(plan.check({ok, error_reply("NOPERM no role")}, "n").ec);
    // Without require_master no ROLE is sent.
    BOOST_TEST(setup_plan(redis::connection_config{}).request().size() == 1u);
}

BOOST_AUTO_TEST_SUITE_END()
