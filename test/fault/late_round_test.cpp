// SPDX-License-Identifier: BSL-1.0
// Requests of an earlier round of an acquisition that a server runs late, after a later round's
// grant or a hand-off: bytes a client wrote on a connection it then gave up (health check) are
// still on their way, and reach the server whenever the network lets them. Such a request must
// never take, extend or free what the acquisition holds now (issue 18).
#include "scripts/scripts_gen.hpp"
#include "support/lock_helpers.hpp"
#include "support/printing.hpp"
#include "support/redis_server.hpp"
#include "support/run_coro.hpp"
#include "support/tcp_proxy.hpp"
#include <redlock/redlock.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace asio = boost::asio;
namespace data = boost::unit_test::data;
using namespace std::chrono_literals;
using redlock::test::background_acquire;
using redlock::test::command_calls;
using redlock::test::eventually;
using redlock::test::held_everywhere;
using redlock::test::holder_on;
using redlock::test::key_tag;
using redlock::test::lock_config;
using redlock::test::nodes_holding;
using redlock::test::queued_everywhere;
using redlock::test::redis_server;
using redlock::test::run_coro;
using redlock::test::server_list;
using redlock::test::start_redis_servers;
using redlock::test::through_proxies;

namespace {

// One call of fair.lua by EVAL on a single server, as the client makes it: place 5000 ms, ttl
// 10000 ms, waiting; the ticket 'local' (the node numbers us) unless given. A round's value is
// "<place>.<n>" for the acquisition's n-th round.
redlock::resp::value fair_call(const redis_server& s, const std::string& op, const std::string& place,
                               const std::string& value, const std::string& ticket = "local") {
    const std::string t = key_tag("f");
    return s.command({"EVAL", std::string(redlock::scripts::fair.source), "5", t + ":lock", t + ":queue",
                      t + ":queue:deadlines", t + ":queue:tickets", t + ":queue:handoffs", op, place, value,
                      t + ":wake:", ticket, "5000", "10000", "wait"});
}

bool granted(const redlock::resp::value& v) {
    return v.kind == redlock::resp::type::array && !v.elements.empty() && v.elements[0].integer == 1;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(late_round_test)

// The interleaving of issue 18 on fair.lua alone: H holds; A's round 2 queues A with a hand-off;
// W queues behind A; H's release hands the lock to A. Then A's round 1, late, tries to acquire
// and withdraws: the hand-off stays A's. Only a later round of A or A's release take it.
BOOST_AUTO_TEST_CASE(an_earlier_rounds_late_calls_leave_a_fair_hand_off_alone) {
    auto servers = start_redis_servers(1);
    const auto& s = *servers[0];
    const std::string lock = key_tag("f") + ":lock";
    const auto get = [&] { return s.command({"GET", lock}).str; };

    BOOST_TEST_REQUIRE(granted(fair_call(s, "acquire", "placeH", "placeH.1")));
    BOOST_TEST_REQUIRE(!granted(fair_call(s, "acquire", "placeA", "placeA.2")));
    BOOST_TEST_REQUIRE(!granted(fair_call(s, "acquire", "placeW", "placeW.1")));
    BOOST_TEST_REQUIRE(fair_call(s, "release", "placeH", "placeH.1").integer == 1);
    BOOST_TEST_REQUIRE(get() == "placeA:placeA.2");  // handed over to A's place, by round 2

    // Round 1's acquire and its cleanup, late; and round 2's own cleanups.
    BOOST_TEST(!granted(fair_call(s, "acquire", "placeA", "placeA.1")));
    BOOST_TEST(get() == "placeA:placeA.2");
    BOOST_TEST(fair_call(s, "withdraw", "placeA", "placeA.1").integer == 0);
    BOOST_TEST(get() == "placeA:placeA.2");
    BOOST_TEST(fair_call(s, "withdraw", "placeA", "placeA.2").integer == 0);
    BOOST_TEST(fair_call(s, "requeue", "placeA", "placeA.2", "1").integer == 0);
    BOOST_TEST(get() == "placeA:placeA.2");
    // Round 2 itself, again (a value no round writes itself is not round 2's to take).
    BOOST_TEST(!granted(fair_call(s, "acquire", "placeA", "placeA.2")));
    BOOST_TEST(get() == "placeA:placeA.2");
    // W cannot take it either, nor a value that only looks like A's.
    BOOST_TEST(!granted(fair_call(s, "acquire", "placeW", "placeW.2")));
    BOOST_TEST(!granted(fair_call(s, "acquire", "placeA:placeA", "placeA:placeA.9")));
    BOOST_TEST(get() == "placeA:placeA.2");
    BOOST_TEST(fair_call(s, "dequeue", "placeA:placeA", "placeA:placeA.9").integer == 0);  // it queued

    // A later round takes it over (a hand-off not heard of).
    BOOST_TEST(granted(fair_call(s, "acquire", "placeA", "placeA.3")));
    BOOST_TEST(get() == "placeA.3");
    BOOST_TEST(fair_call(s, "release", "placeA", "placeA.3").integer == 1);
    BOOST_TEST(get() == "placeW:placeW.2");  // W's latest refused round registered its hand-off

    // The end of an acquisition frees a hand-off to its place, whichever round it names.
    BOOST_TEST(fair_call(s, "release", "placeW", "placeW.7").integer == 1);
    BOOST_TEST(get().empty());
}

// A fair acquisition is never locked out by what its own earlier rounds left: A's round 1 queues
// A with a hand-off; round 2's call never reaches this node (its connection was given up);
// H's release hands the lock over by round 1's hand-off. Round 3 takes it. A round's value that
// its lost cleanup left is taken by any later round, and freed by the acquisition's release;
// no earlier round takes a later one's. Before, only the previous round's value or hand-off
// was taken: round 3 was refused until the hand-off expired, and a value two rounds back
// stayed for its ttl.
BOOST_AUTO_TEST_CASE(a_fair_acquisition_takes_what_any_earlier_round_of_its_own_left) {
    auto servers = start_redis_servers(1);
    const auto& s = *servers[0];
    const std::string lock = key_tag("f") + ":lock";
    const auto get = [&] { return s.command({"GET", lock}).str; };

    BOOST_TEST_REQUIRE(granted(fair_call(s, "acquire", "placeH", "placeH.1")));
    BOOST_TEST_REQUIRE(!granted(fair_call(s, "acquire", "placeA", "placeA.1")));
    BOOST_TEST_REQUIRE(fair_call(s, "release", "placeH", "placeH.1").integer == 1);
    BOOST_TEST_REQUIRE(get() == "placeA:placeA.1");
    BOOST_TEST(granted(fair_call(s, "acquire", "placeA", "placeA.3")));
    BOOST_TEST(get() == "placeA.3");
    BOOST_TEST(fair_call(s, "release", "placeA", "placeA.3").integer == 1);
    BOOST_TEST(get().empty());

    // Round 4's value, which its lost cleanup left: round 7 takes it; a late round 5 does not
    // take round 7's; the release frees what round 6, late again, wrote after round 7's grant
    // elsewhere, and leaves the queue empty.
    BOOST_TEST_REQUIRE(granted(fair_call(s, "acquire", "placeB", "placeB.4")));
    BOOST_TEST(!granted(fair_call(s, "acquire", "placeW", "placeW.1")));
    BOOST_TEST(granted(fair_call(s, "acquire", "placeB", "placeB.7")));
    BOOST_TEST(get() == "placeB.7");
    BOOST_TEST(!granted(fair_call(s, "acquire", "placeB", "placeB.5")));
    BOOST_TEST(get() == "placeB.7");
    BOOST_TEST(fair_call(s, "withdraw", "placeB", "placeB.5").integer == 0);
    BOOST_TEST(get() == "placeB.7");
    BOOST_TEST(s.command({"SET", lock, "placeB.6"}).str == "OK");
    BOOST_TEST(fair_call(s, "release", "placeB", "placeB.7").integer == 1);
    BOOST_TEST(get() == "placeW:placeW.1");
    BOOST_TEST(fair_call(s, "release", "placeW", "placeW.1").integer == 1);
    BOOST_TEST(get().empty());
    BOOST_TEST(s.command({"EXISTS", key_tag("f") + ":queue"}).integer == 0);
}

// The same through the client, N = 1 and N = 5: A's first round, and its cleanup, go out on
// connections that a quorum of proxies holds back; A gives those connections up (health check)
// and queues on new ones; W queues behind A; H's release hands the lock to A. Then the held
// bytes reach the servers. Before the fix, the late round took the hand-off over and its
// cleanup gave the lock to W: two holders.
BOOST_DATA_TEST_CASE(a_late_earlier_round_leaves_a_fair_hand_off_alone, data::make({1, 5}), n) {
    auto servers = start_redis_servers(static_cast<std::size_t>(n));
    auto proxied = through_proxies(servers);
    proxied.config.health_check_interval = 100ms;  // a silent connection is given up after 200 ms
    const std::size_t held = servers.size() / 2 + 1;
    asio::io_context ioc;
    redlock::client a(ioc.get_executor(), proxied.config);
    redlock::client h(ioc.get_executor(), lock_config(servers));
    redlock::client w(ioc.get_executor(), lock_config(servers));
    auto fair = [](std::chrono::milliseconds wait) {
        auto o = redlock::test::options(10s, wait);
        o.fair = true;
        o.queue_timeout = 30s;
        o.watchdog = false;
        return o;
    };
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        // A connected with its scripts loaded: only the acquire's own commands are held.
        BOOST_TEST_REQUIRE(co_await redlock::test::warm_up_every_node(a, servers, fair(0ms)));
        auto holder = co_await h.async_acquire("r", fair(0ms), asio::use_awaitable);
        BOOST_TEST_REQUIRE(co_await eventually([&] { return held_everywhere(servers, "r", holder); }));

        for (std::size_t i = 0; i < held; ++i)
            proxied.proxies[i]->hold_requests();
        background_acquire first;
        auto o = fair(20s);
        o.node_timeout = 50ms;
        o.retry = redlock::retry_config{300ms, 300ms};
        first.start(a, "r", o);
        // A gave up the held connections and queued on new ones.
        BOOST_TEST_REQUIRE(co_await eventually(
            [&] {
                for (std::size_t i = 0; i < held; ++i)
                    if (proxied.proxies[i]->abandoned_connections() == 0) return false;
                return queued_everywhere(servers, "r", 1);
            },
            10s));
        background_acquire second;
        second.start(w, "r", fair(20s));
        BOOST_TEST_REQUIRE(co_await eventually([&] { return queued_everywhere(servers, "r", 2); }));
        co_await holder.async_release(asio::use_awaitable);
        BOOST_TEST_REQUIRE(co_await eventually([&] { return first.result.has_value(); }, 10s));
        BOOST_TEST_REQUIRE(!*first.result);
        const std::string token = first.lease->token();
        BOOST_TEST_REQUIRE(
            co_await eventually([&] { return nodes_holding(servers, "r", token) == servers.size(); }));

        // The held bytes arrive and run.
        std::vector<std::uint64_t> ran_before;
        for (std::size_t i = 0; i < held; ++i) {
            ran_before.push_back(command_calls(*servers[i], "evalsha"));
            proxied.proxies[i]->deliver_held();
        }
        BOOST_TEST_REQUIRE(co_await eventually([&] {
            for (std::size_t i = 0; i < held; ++i)
                if (proxied.proxies[i]->abandoned_connections() != 0) return false;
            return true;
        }));
        for (std::size_t i = 0; i < held; ++i)
            BOOST_TEST_REQUIRE(command_calls(*servers[i], "evalsha") > ran_before[i],
                               "the late requests ran on node " << i);

        for (std::size_t i = 0; i < servers.size(); ++i)
            BOOST_TEST(holder_on(*servers[i], "r") == token, "node " << i);
        BOOST_TEST(!second.result.has_value());
        BOOST_TEST(first.lease->held());

        // A's release hands the lock on to W.
        co_await first.lease->async_release(asio::use_awaitable);
        BOOST_TEST_REQUIRE(co_await eventually([&] { return second.result.has_value(); }, 10s));
        BOOST_TEST(!*second.result);
        BOOST_TEST(second.lease->held());
        co_await second.lease->async_release(asio::use_awaitable);
        BOOST_TEST(co_await eventually([&] { return redlock::test::no_key_anywhere(servers, "r"); }));
    }());
}

// The final round of an acquisition that gives up: its release goes out as soon as the round is
// lost, and a node still to answer (a straggler) then finds the key held by an earlier round of
// ours, whose reply and cleanup were both lost. A takeover at that moment would write this
// round's token with the full ttl after the release had run, and nobody would release it: the
// straggler frees the earlier round's key instead. Nodes 0 and 1 hold another owner's lock;
// node 2's proxy drops round 1's reply, swallows its cleanup, and then answers 1 s late.
BOOST_AUTO_TEST_CASE(a_straggler_of_the_final_round_frees_an_earlier_rounds_key) {
    auto servers = start_redis_servers(3);
    auto proxied = through_proxies(servers);
    proxied.config.health_check_interval = 0ms;  // only the proxies decide when a connection ends
    proxied.config.connect_timeout = 10s;        // node 2's handshake replies are late too
    auto& slow = *proxied.proxies[2];
    asio::io_context ioc;
    redlock::client a(ioc.get_executor(), proxied.config);
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        // Connected, scripts loaded: only the acquire's own commands go through the proxies.
        BOOST_TEST_REQUIRE(co_await redlock::test::warm_up_every_node(a, servers, redlock::test::options()));
        for (std::size_t i = 0; i < 2; ++i)
            servers[i]->command({"SET", redlock::test::lock_key("s"), "another-owner", "PX", "60000"});

        // Round 1: the other owner's denials wait in the held bytes while node 2 runs our SET.
        proxied.proxies[0]->hold_requests();
        proxied.proxies[1]->hold_requests();
        slow.set_mode(redlock::test::tcp_proxy::mode::drop_replies);
        background_acquire attempt;
        redlock::diagnostics diag;
        auto o = redlock::test::options(30s, 3s);  // a 30 s ttl: only a release frees the key in time
        o.node_timeout = 5s;
        o.watchdog = false;
        attempt.start(a, "s", o, diag);
        BOOST_TEST_REQUIRE(co_await eventually([&] { return redlock::test::key_exists(*servers[2], "s"); }));
        const std::string first_token = holder_on(*servers[2], "s");
        // Round 1's cleanup goes into the hole once the denials decide the round.
        slow.set_mode(redlock::test::tcp_proxy::mode::blackhole);
        const auto swallowed_before = slow.bytes_from_clients();
        proxied.proxies[0]->deliver_held();
        proxied.proxies[1]->deliver_held();
        BOOST_TEST_REQUIRE(co_await eventually([&] { return slow.bytes_from_clients() > swallowed_before; }));
        // A new connection to node 2, which answers every later round after the denials.
        slow.set_reply_delay(1000ms);
        slow.set_mode(redlock::test::tcp_proxy::mode::pass);

        BOOST_TEST_REQUIRE(co_await eventually([&] { return attempt.result.has_value(); }, 20s));
        BOOST_TEST((*attempt.result == redlock::error::wait_timeout), attempt.result->message());
        BOOST_TEST_REQUIRE(
            diag.message.find("held by an earlier round of ours, released") != std::string::npos,
            diag.message);
        // Before, the straggler took the key over with the full 30 s, after the release ran.
        BOOST_TEST(co_await eventually([&] { return !redlock::test::key_exists(*servers[2], "s"); }),
                   "node 2 holds " << holder_on(*servers[2], "s") << ", round 1 wrote " << first_token);
        for (std::size_t i = 0; i < 2; ++i)
            BOOST_TEST(holder_on(*servers[i], "s") == "another-owner");
    }());
}

BOOST_AUTO_TEST_SUITE_END()
