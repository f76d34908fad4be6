// SPDX-License-Identifier: BSL-1.0
// client_config::on_event on real servers: what a lease and a node tell, in order, and that a
// callback that throws breaks nothing.
#include "support/lock_helpers.hpp"
#include "support/printing.hpp"
#include "support/redis_server.hpp"
#include "support/run_coro.hpp"
#include <redlock/redlock.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

namespace asio = boost::asio;
using namespace std::chrono_literals;
using redlock::event;
using redlock::event_kind;
using redlock::test::eventually;
using redlock::test::lock_config;
using redlock::test::lock_key;
using redlock::test::options;
using redlock::test::run_coro;
using redlock::test::sleep_for;
using redlock::test::start_redis_servers;

namespace {

constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);

// The kinds heard, in order, as one line for the test's messages.
std::string kinds(const std::vector<event>& heard) {
    std::string s;
    for (const auto& e : heard)
        s += redlock::to_string(e) + "; ";
    return s;
}

bool heard_kind(const std::vector<event>& heard, event_kind kind, std::size_t from = 0) {
    return std::any_of(heard.begin() + static_cast<std::ptrdiff_t>(std::min(from, heard.size())), heard.end(),
                       [&](const event& e) { return e.kind == kind; });
}

}  // namespace

BOOST_AUTO_TEST_SUITE(events_test)

// A lease tells its grant, its watchdog's stop and its release; one whose key another writer
// took tells its loss, with why.
BOOST_AUTO_TEST_CASE(a_lease_tells_its_grant_its_end_and_its_loss) {
    auto servers = start_redis_servers(1);
    std::vector<event> heard;
    auto cfg = lock_config(servers);
    cfg.on_event = [&](const event& e) { heard.push_back(e); };
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), cfg);
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto kept = options(900ms);
        kept.watchdog = true;
        auto l = co_await client.async_acquire("events:a", kept, asio::use_awaitable);
        co_await sleep_for(50ms);
        co_await l.async_release(asio::use_awaitable);
        BOOST_TEST_REQUIRE(co_await eventually([&] { return heard_kind(heard, event_kind::released); }),
                           kinds(heard));
        std::vector<event> lease_events;
        for (const auto& e : heard)
            if (e.resource == "events:a") lease_events.push_back(e);
        BOOST_TEST_REQUIRE(lease_events.size() == 3u, kinds(heard));
        BOOST_TEST((lease_events[0].kind == event_kind::acquired), kinds(heard));
        BOOST_TEST((lease_events[1].kind == event_kind::watchdog_stopped), kinds(heard));
        BOOST_TEST((lease_events[2].kind == event_kind::released), kinds(heard));
        BOOST_TEST(!lease_events[2].error);
        BOOST_TEST(lease_events[2].duration >= 50ms, kinds(heard));

        // Another writer takes the key: the watchdog's next extend is denied.
        const auto before = heard.size();
        auto lost = co_await client.async_acquire("events:b", kept, asio::use_awaitable);
        servers[0]->command({"SET", lock_key("events:b"), "someone else"});
        BOOST_TEST_REQUIRE(
            co_await eventually([&] { return heard_kind(heard, event_kind::lease_lost, before); }, 10s),
            kinds(heard));
        const auto it = std::find_if(heard.begin() + static_cast<std::ptrdiff_t>(before), heard.end(),
                                     [](const event& e) { return e.kind == event_kind::lease_lost; });
        BOOST_TEST(it->resource == "events:b");
        BOOST_TEST((it->error == redlock::error::lock_lost), it->error.message());
        BOOST_TEST(it->detail.find("majority") != std::string::npos, it->detail);
        BOOST_TEST(heard_kind(heard, event_kind::watchdog_stopped, before), kinds(heard));
        BOOST_TEST(!lost.held());
    }());
}

// A node tells that it is up, in quarantine (for how long), voting again; that it went down
// when its server died, and up again with a new quarantine after the restart.
BOOST_AUTO_TEST_CASE(a_node_tells_when_it_goes_down_comes_up_and_votes_again) {
    auto servers = start_redis_servers(1);
    std::vector<event> heard;
    auto cfg = lock_config(servers);
    cfg.restart_quarantine = true;  // the server is fresh: its first quarantine is max_ttl long
    cfg.max_ttl = 1500ms;
    cfg.on_event = [&](const event& e) { heard.push_back(e); };
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), cfg);
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        // The quarantine is told from the handshake, node_up once it is over: wait for both.
        BOOST_TEST_REQUIRE(co_await eventually(
                               [&] {
                                   return heard_kind(heard, event_kind::node_quarantined) &&
                                          heard_kind(heard, event_kind::node_up);
                               },
                               10s),
                           kinds(heard));
        const auto q = std::find_if(heard.begin(), heard.end(),
                                    [](const event& e) { return e.kind == event_kind::node_quarantined; });
        BOOST_TEST(q->node == 0u);
        BOOST_TEST(q->node_name == servers[0]->uri());
        BOOST_TEST(q->duration > 0ms);
        // From the server's start: max_ttl, its drift, and a second (uptime is in whole seconds).
        BOOST_TEST(q->duration <= 2600ms);
        BOOST_TEST(q->detail.find("restart quarantine") != std::string::npos, q->detail);

        // Once the quarantine is over, the next grant counts: the node votes again.
        BOOST_TEST_REQUIRE(co_await eventually([&] { return client.metrics().nodes[0].voting; }, 10s),
                           kinds(heard));
        auto l = co_await client.async_acquire("events:n", options(1s), asio::use_awaitable);
        BOOST_TEST_REQUIRE(co_await eventually([&] { return heard_kind(heard, event_kind::node_voting); }),
                           kinds(heard));
        co_await l.async_release(asio::use_awaitable);

        const auto before = heard.size();
        servers[0]->kill9();
        BOOST_TEST_REQUIRE(
            co_await eventually([&] { return heard_kind(heard, event_kind::node_down, before); }, 10s),
            kinds(heard));
        co_await sleep_for(800ms);  // several reconnect attempts fail meanwhile (50 ms, doubling)
        servers[0]->restart();
        // The quarantine is told from the handshake, node_up once it is over: wait for both.
        BOOST_TEST(co_await eventually(
                       [&] {
                           return heard_kind(heard, event_kind::node_quarantined, before) &&
                                  heard_kind(heard, event_kind::node_up, before);
                       },
                       10s),
                   kinds(heard));
        // Down once, not once per failed attempt while it was away.
        const auto downs = std::count_if(heard.begin() + static_cast<std::ptrdiff_t>(before), heard.end(),
                                         [](const event& e) { return e.kind == event_kind::node_down; });
        BOOST_TEST(downs == 1, kinds(heard));
    }());
}

// A callback that throws loses its event, is counted, and the client goes on.
BOOST_AUTO_TEST_CASE(a_callback_that_throws_breaks_nothing) {
    auto servers = start_redis_servers(1);
    auto cfg = lock_config(servers);
    cfg.on_event = [](const event&) { throw std::runtime_error("a logger that failed"); };
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), cfg);
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        for (int i = 0; i < 3; ++i) {
            auto [ec, l] = co_await client.async_acquire("events:t", options(1s), tuple_awaitable);
            BOOST_TEST_REQUIRE(!ec, ec.message());
            co_await l.async_release(asio::use_awaitable);
        }
        // Each pair told two events, and the connection its node_up.
        BOOST_TEST(co_await eventually([&] { return client.metrics().event_callback_failures >= 6u; }));
    }());
}

BOOST_AUTO_TEST_SUITE_END()
