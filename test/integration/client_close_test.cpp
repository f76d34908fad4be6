// SPDX-License-Identifier: BSL-1.0
// client::async_close on real servers, N = 1 and N = 5: what it releases, keeps, cancels and
// refuses.
#include "support/lock_helpers.hpp"
#include "support/printing.hpp"
#include "support/redis_server.hpp"
#include "support/run_coro.hpp"
#include "support/wait_until.hpp"
#include <redlock/redlock.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <optional>
#include <string>

namespace asio = boost::asio;
namespace data = boost::unit_test::data;
using namespace std::chrono_literals;
using boost::system::error_code;
using redlock::test::eventually;
using redlock::test::holder_on;
using redlock::test::lock_config;
using redlock::test::no_key_anywhere;
using redlock::test::options;
using redlock::test::run_coro;
using redlock::test::start_redis_servers;
using redlock::test::wait_until;

namespace {
constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);
const auto node_counts = data::make({1, 5});
}  // namespace

// The connections the server has open under the client name `name`.
std::size_t connections_named(const redlock::test::redis_server& server, const std::string& name) {
    const auto list = server.command({"CLIENT", "LIST"}).str;
    std::size_t n = 0;
    for (auto pos = list.find(" name=" + name + " "); pos != std::string::npos;
         pos = list.find(" name=" + name + " ", pos + 1))
        ++n;
    return n;
}

// Waits for the close, keeping `held` in its frame: the close's handler then owns a lease that
// owns the client.
asio::awaitable<void> close_holding(redlock::client& c, [[maybe_unused]] redlock::lease held, bool& waiting) {
    waiting = true;
    co_await c.async_close(asio::use_awaitable);
}

BOOST_AUTO_TEST_SUITE(client_close_test)

// The io_context is destroyed while the client keeps handlers outside asio's queues: an
// async_close waiting for a hung server, an extend waiting for its batch to leave. Those
// handlers own leases that own the client; the context's shutdown drops them as asio drops its
// own, so the client is freed with its context and its connections close.
BOOST_AUTO_TEST_CASE(a_context_destroyed_with_work_pending_frees_the_client) {
    auto servers = start_redis_servers(1);
    auto& server = *servers.front();

    auto closing = lock_config(servers);
    closing.client_name = "freed-with-a-close-pending";
    {
        asio::io_context ioc;
        std::optional<redlock::client> client(std::in_place, ioc.get_executor(), closing);
        run_coro(ioc, [&]() -> asio::awaitable<void> {
            auto held = co_await client->async_acquire("freed:close", options(10s), asio::use_awaitable);
            server.pause();  // the close's release gets no answer: its handler waits
            bool waiting = false;
            asio::co_spawn(ioc, close_holding(*client, std::move(held), waiting), asio::detached);
            BOOST_TEST_REQUIRE(co_await eventually([&] { return waiting; }));
            // Refused once the close has started (and keeps its handler): it started before this.
            auto [after, none] = co_await client->async_acquire("freed:after", options(), tuple_awaitable);
            BOOST_TEST((after == redlock::error::client_closed), after.message());
        }());
        client.reset();
    }
    server.resume();
    BOOST_TEST(wait_until([&] { return connections_named(server, closing.client_name) == 0; }),
               connections_named(server, closing.client_name) << " connections left open");

    auto extending = lock_config(servers);
    extending.client_name = "freed-with-an-extend-pending";
    {
        asio::io_context ioc;
        std::optional<redlock::client> client(std::in_place, ioc.get_executor(), extending);
        run_coro(ioc, [&]() -> asio::awaitable<void> {
            auto held = co_await client->async_acquire("freed:extend", options(10s), asio::use_awaitable);
            // Queued for its batch, which leaves 2 ms later: the context is gone by then (a
            // slower moment sends it first, and the connection drops it). The extend starts on
            // the client's strand within the two turns of the loop this coroutine waits.
            held.async_extend(10s, [](error_code) {});
            co_await asio::post(ioc, asio::use_awaitable);
            co_await asio::post(ioc, asio::use_awaitable);
        }());
        client.reset();
    }
    BOOST_TEST(wait_until([&] { return connections_named(server, extending.client_name) == 0; }),
               connections_named(server, extending.client_name) << " connections left open");
}

// A holds a lease kept by its watchdog and waits for a resource B holds. A's close releases
// its lease (on every node, before it completes), ends the waiting acquire with
// operation_aborted, and refuses what comes after it.
BOOST_DATA_TEST_CASE(a_close_releases_the_leases_ends_the_waits_and_refuses_what_follows, node_counts, n) {
    auto servers = start_redis_servers(static_cast<std::size_t>(n));
    asio::io_context ioc;
    redlock::client a(ioc.get_executor(), lock_config(servers));
    redlock::client b(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto kept = options(2s);
        kept.watchdog = true;
        auto held = co_await a.async_acquire("close:held", kept, asio::use_awaitable);
        std::optional<error_code> lost;
        held.async_wait_lost([&](error_code ec) { lost = ec; });
        auto busy = co_await b.async_acquire("close:busy", options(10s), asio::use_awaitable);
        std::optional<error_code> waited;
        a.async_acquire("close:busy", options(10s, 10s), [&](error_code ec, redlock::lease) { waited = ec; });
        // The waiter has made its first attempt, refused: it waits.
        BOOST_TEST_REQUIRE(co_await eventually([&] { return a.metrics().attempts >= 2u; }));

        auto [closed] = co_await a.async_close(tuple_awaitable);
        BOOST_TEST(!closed, closed.message());
        BOOST_TEST(no_key_anywhere(servers, "close:held"));  // released before the close completed
        BOOST_TEST(!held.held());
        BOOST_TEST(co_await eventually([&] { return waited.has_value() && lost.has_value(); }));
        BOOST_TEST((waited == error_code(asio::error::operation_aborted)), waited->message());
        BOOST_TEST(!*lost, lost->message());  // released, not lost
        BOOST_TEST(a.metrics().watchdogs_running == 0u);

        auto [after, none] = co_await a.async_acquire("close:new", options(), tuple_awaitable);
        BOOST_TEST((after == redlock::error::client_closed), after.message());
        auto [twice] = co_await a.async_close(tuple_awaitable);  // completes at once
        BOOST_TEST(!twice, twice.message());
        auto [again] = co_await held.async_release(tuple_awaitable);
        BOOST_TEST((again == redlock::error::not_owner), again.message());

        // B was untouched, and the cancelled waiter left nothing behind it.
        BOOST_TEST(busy.held());
        co_await busy.async_release(asio::use_awaitable);
        BOOST_TEST(no_key_anywhere(servers, "close:busy"));
        BOOST_TEST(no_key_anywhere(servers, "close:new"));
    }());
}

// With release_leases false the lease stays on the servers, no longer extended: it goes when
// its ttl runs out, and its scope hears client_closed.
BOOST_AUTO_TEST_CASE(a_close_that_keeps_the_leases_leaves_them_to_their_ttl) {
    auto servers = start_redis_servers(1);
    asio::io_context ioc;
    redlock::client a(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto kept = options(1500ms);
        kept.watchdog = true;
        auto held = co_await a.async_acquire("close:kept", kept, asio::use_awaitable);
        std::optional<error_code> lost;
        held.async_wait_lost([&](error_code ec) { lost = ec; });

        redlock::close_options keep;
        keep.release_leases = false;
        co_await a.async_close(keep, asio::use_awaitable);
        BOOST_TEST(holder_on(*servers[0], "close:kept") == held.token());
        BOOST_TEST(co_await eventually([&] { return lost.has_value(); }));
        BOOST_TEST((lost == error_code(redlock::error::client_closed)), lost->message());
        BOOST_TEST(a.metrics().watchdogs_running == 0u);
        // Without its watchdog the key lasts its ttl, 1.5 s, not the 5 s allowed here.
        BOOST_TEST(co_await eventually([&] { return no_key_anywhere(servers, "close:kept"); }));
    }());
}

BOOST_AUTO_TEST_SUITE_END()
