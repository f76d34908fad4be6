// SPDX-License-Identifier: BSL-1.0
// One release wakes one waiting client among many: the clients that wait on a resource list
// themselves on its nodes, and a release names the one it wakes; a client named that no longer
// waits passes the wake on. On real servers, with several clients.
#include "support/lock_helpers.hpp"
#include "support/printing.hpp"
#include "support/redis_server.hpp"
#include "support/run_coro.hpp"
#include <redlock/redlock.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace asio = boost::asio;
namespace data = boost::unit_test::data;
using namespace std::chrono_literals;
using boost::system::error_code;
using redlock::test::eventually;
using redlock::test::held_everywhere;
using redlock::test::lock_config;
using redlock::test::options;
using redlock::test::run_coro;
using redlock::test::start_redis_servers;

namespace {

constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);
const auto node_counts = data::make({1, 5});

// A wait that only a release message ends early: the holder's ttl is long, and the first
// timed retry comes after 10 s.
redlock::lock_options waiting(std::chrono::milliseconds wait) {
    auto o = options(30s, wait);
    o.retry = redlock::retry_config{10s, 10s};
    return o;
}

std::string channel_of(const std::string& resource) {
    return "{redlock:" + resource + "}:released";
}

// The clients listed as waiting on the resource on every node: the sorted set at the channel's
// name.
bool listed_everywhere(const redlock::test::server_list& servers, const std::string& resource,
                       std::int64_t n) {
    for (const auto& s : servers)
        if (s->command({"ZCARD", channel_of(resource)}).integer != n) return false;
    return true;
}

// listen.lua's entry for client `id` (hex digits), counting until `until_ms` in server time.
std::vector<std::string> listing(const std::string& resource, const std::string& id, std::int64_t until_ms) {
    return {"ZADD", channel_of(resource), std::to_string(std::stoull(id.substr(0, 13), nullptr, 16)),
            id + " " + std::to_string(until_ms)};
}

bool listed_anywhere(const redlock::test::server_list& servers, const std::string& resource,
                     const std::string& id) {
    for (const auto& s : servers)
        for (const auto& entry : s->command({"ZRANGE", channel_of(resource), "0", "-1"}).elements)
            if (entry.str.starts_with(id + " ")) return true;
    return false;
}

bool subscribed_everywhere(const redlock::test::server_list& servers, const std::string& resource,
                           std::int64_t n) {
    for (const auto& s : servers) {
        auto v = s->command({"PUBSUB", "SHARDNUMSUB", channel_of(resource)});
        if (v.elements.size() != 2 || v.elements[1].integer != n) return false;
    }
    return true;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(release_wake_test)

// Six clients wait, one waiter each; each release wakes one of them, never all six. Were every
// client told of every release, each would wake its waiter: 6 + 5 + ... + 1 = 21 wake-ups for
// six hand-offs (17 with five nodes, some coming while a waiter's round is on its way).
BOOST_DATA_TEST_CASE(a_release_wakes_one_waiting_client_of_many, node_counts, n) {
    auto servers = start_redis_servers(static_cast<std::size_t>(n));
    asio::io_context ioc;
    redlock::client holder(ioc.get_executor(), lock_config(servers));
    constexpr int clients = 6;
    std::vector<std::unique_ptr<redlock::client>> waiters;
    for (int i = 0; i < clients; ++i)
        waiters.push_back(std::make_unique<redlock::client>(ioc.get_executor(), lock_config(servers)));
    const auto sum = [&](auto field) {
        std::uint64_t total = 0;
        for (const auto& c : waiters)
            total += c->metrics().*field;
        return total;
    };
    run_coro(
        ioc,
        [&]() -> asio::awaitable<void> {
            auto first = co_await holder.async_acquire("w", options(30s), asio::use_awaitable);
            BOOST_TEST_REQUIRE(co_await eventually([&] { return held_everywhere(servers, "w", first); }));
            int acquired = 0;
            int failed = 0;
            auto ex = co_await asio::this_coro::executor;
            for (auto& c : waiters) {
                asio::co_spawn(
                    ex,
                    [&, client = c.get()]() -> asio::awaitable<void> {
                        auto [ec, l] = co_await client->async_acquire("w", waiting(20s), tuple_awaitable);
                        if (ec) {
                            ++failed;
                            co_return;
                        }
                        ++acquired;
                        co_await l.async_release(asio::use_awaitable);
                    },
                    asio::detached);
            }
            BOOST_TEST_REQUIRE(co_await eventually([&] {
                return listed_everywhere(servers, "w", clients) &&
                       subscribed_everywhere(servers, "w", clients);
            }));
            BOOST_TEST(sum(&redlock::metrics_snapshot::release_wakeups) == 0U);

            co_await first.async_release(asio::use_awaitable);
            BOOST_TEST(co_await eventually([&] { return acquired + failed == clients; }, 20s));
            BOOST_TEST(acquired == clients);
            const auto wakeups = sum(&redlock::metrics_snapshot::release_wakeups);
            BOOST_TEST_MESSAGE("N=" << n << ": " << wakeups << " wake-ups for " << clients << " hand-offs");
            // One node, one name per release. Several nodes mostly list the clients in the
            // same order and name the same one, but may name one each.
            if (n == 1)
                BOOST_TEST(wakeups == static_cast<std::uint64_t>(clients));
            else
                BOOST_TEST(wakeups < static_cast<std::uint64_t>(2 * clients));
            // A client whose waiter left is no longer listed.
            BOOST_TEST(co_await eventually([&] { return listed_everywhere(servers, "w", 0); }));
        }(),
        60s);
}

// A release that named a client whose waiter has just left (its "leave" not yet run on the
// nodes, made here by listing it again by hand) wakes another waiting client through it: the
// named client, still subscribed for a moment, passes the wake on. Without that, the other
// waiter would sleep until its first timed retry, 10 s after it began to wait. Which client a
// release names depends on its token: the rounds go on until two named the client that left.
BOOST_DATA_TEST_CASE(a_client_named_after_its_waiter_left_passes_the_wake_on, node_counts, n) {
    auto servers = start_redis_servers(static_cast<std::size_t>(n));
    asio::io_context ioc;
    redlock::client holder(ioc.get_executor(), lock_config(servers));
    redlock::client gone(ioc.get_executor(), lock_config(servers));
    redlock::client still(ioc.get_executor(), lock_config(servers));
    run_coro(
        ioc,
        [&]() -> asio::awaitable<void> {
            int passed = 0;
            int named_directly = 0;
            for (int round = 0; round < 40 && passed < 2; ++round) {
                auto held = co_await holder.async_acquire("p", options(30s), asio::use_awaitable);
                BOOST_TEST_REQUIRE(co_await eventually([&] { return held_everywhere(servers, "p", held); }));

                // `gone` waits, is listed, and gives up.
                asio::cancellation_signal cancel;
                std::optional<error_code> gave_up;
                gone.async_acquire("p", waiting(20s),
                                   asio::bind_cancellation_slot(
                                       cancel.slot(), [&](error_code e, redlock::lease) { gave_up = e; }));
                BOOST_TEST_REQUIRE(co_await eventually([&] { return listed_everywhere(servers, "p", 1); }));
                const auto entry =
                    servers[0]->command({"ZRANGE", channel_of("p"), "0", "-1"}).elements.at(0).str;
                const auto id = entry.substr(0, entry.find(' '));
                cancel.emit(asio::cancellation_type::terminal);
                BOOST_TEST_REQUIRE(co_await eventually([&] { return gave_up.has_value(); }));
                BOOST_TEST_REQUIRE(co_await eventually([&] { return listed_everywhere(servers, "p", 0); }));
                // As if a release had named it before its "leave" ran: listed again.
                for (const auto& s : servers)
                    s->command(listing("p", id, 99999999999999));

                std::optional<error_code> woken;
                redlock::lease got;
                still.async_acquire("p", waiting(20s), [&](error_code e, redlock::lease l) {
                    woken = e;
                    got = std::move(l);
                });
                BOOST_TEST_REQUIRE(co_await eventually([&] {
                    return listed_everywhere(servers, "p", 2) && subscribed_everywhere(servers, "p", 2);
                }));
                co_await held.async_release(asio::use_awaitable);
                // Woken by a message: well before its timed retry.
                BOOST_TEST_REQUIRE(co_await eventually([&] { return woken.has_value(); }, 5s));
                BOOST_TEST_REQUIRE(!*woken, woken->message());
                // The pass took `gone` off the lists before it named `still`.
                if (!listed_anywhere(servers, "p", id))
                    ++passed;
                else
                    ++named_directly;
                co_await got.async_release(asio::use_awaitable);
                for (const auto& s : servers)
                    s->command({"DEL", channel_of("p")});
            }
            BOOST_TEST_MESSAGE("N=" << n << ": " << passed << " wakes passed on, " << named_directly
                                    << " named the waiter directly");
            BOOST_TEST(passed == 2);
        }(),
        300s);
}

// A client that crashed while it waited stays listed until its lease runs out, not after: a
// release then names only the clients that are there (and drops a lapsed entry it meets). Here
// the crashed clients are entries made by hand whose lease has just run out; were they named,
// the waiting client would sleep until its first timed retry, 10 s later, in about half of the
// rounds.
BOOST_DATA_TEST_CASE(a_crashed_clients_listing_ends_with_its_lease, node_counts, n) {
    auto servers = start_redis_servers(static_cast<std::size_t>(n));
    asio::io_context ioc;
    redlock::client holder(ioc.get_executor(), lock_config(servers));
    redlock::client alive(ioc.get_executor(), lock_config(servers));
    // This server's clock in ms, as listen.lua counts a lease.
    const auto server_ms = [](const redlock::test::redis_server& s) {
        const auto t = s.command({"TIME"});
        return std::stoll(t.elements.at(0).str) * 1000 + std::stoll(t.elements.at(1).str) / 1000;
    };
    run_coro(
        ioc,
        [&]() -> asio::awaitable<void> {
            for (int round = 0; round < 8; ++round) {
                auto held = co_await holder.async_acquire("c", options(30s), asio::use_awaitable);
                BOOST_TEST_REQUIRE(co_await eventually([&] { return held_everywhere(servers, "c", held); }));
                const auto crashed = "c0ffee" + std::to_string(round) + "0000000000000000000000000";
                std::vector<std::int64_t> lapse;
                for (const auto& s : servers) {
                    lapse.push_back(server_ms(*s) + 100);
                    s->command(listing("c", crashed, lapse.back()));
                }
                std::optional<error_code> woken;
                redlock::lease got;
                alive.async_acquire("c", waiting(20s), [&](error_code e, redlock::lease l) {
                    woken = e;
                    got = std::move(l);
                });
                BOOST_TEST_REQUIRE(co_await eventually([&] {
                    if (!listed_everywhere(servers, "c", 2)) return false;
                    for (std::size_t i = 0; i < servers.size(); ++i)
                        if (server_ms(*servers[i]) <= lapse[i]) return false;
                    return true;
                }));
                co_await held.async_release(asio::use_awaitable);
                BOOST_TEST_REQUIRE(co_await eventually([&] { return woken.has_value(); }, 5s));
                BOOST_TEST_REQUIRE(!*woken, woken->message());
                co_await got.async_release(asio::use_awaitable);
                // A lapsed entry goes when a release meets it; here the next round's replaces it.
                for (const auto& s : servers)
                    s->command({"DEL", channel_of("c")});
            }
        }(),
        120s);
}

BOOST_AUTO_TEST_SUITE_END()
