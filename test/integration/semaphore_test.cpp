// SPDX-License-Identifier: BSL-1.0
// Semaphores with expiring permits (lock_options::permits) on real servers, N = 1 and N = 5.
#include "scripts/scripts_gen.hpp"
#include "support/lock_helpers.hpp"
#include "support/printing.hpp"
#include "support/redis_server.hpp"
#include "support/run_coro.hpp"
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
#include <vector>

namespace asio = boost::asio;
namespace data = boost::unit_test::data;
using namespace std::chrono_literals;
using redlock::test::eventually;
using redlock::test::key_tag;
using redlock::test::lock_config;
using redlock::test::lock_key;
using redlock::test::members_everywhere;
using redlock::test::options;
using redlock::test::run_coro;
using redlock::test::sleep_for;
using redlock::test::start_redis_servers;

namespace {

constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);
const auto node_counts = data::make({1, 5});

redlock::lock_options permits(int k, std::chrono::milliseconds ttl = 10s,
                              std::chrono::milliseconds wait = 0ms) {
    auto o = options(ttl, wait);
    o.permits = k;
    return o;
}

// Neither the permits nor their count (a member of the same key) is left on any server.
bool nothing_left(const redlock::test::server_list& servers, const std::string& resource) {
    return redlock::test::no_key_anywhere(servers, resource);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(semaphore_test)

BOOST_DATA_TEST_CASE(k_holders_at_once_and_the_next_is_refused_until_one_releases, node_counts, n) {
    auto servers = start_redis_servers(static_cast<std::size_t>(n));
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        std::vector<redlock::lease> held;
        for (int i = 0; i < 3; ++i) {
            auto [ec, l] = co_await client.async_acquire("jobs", permits(3), tuple_awaitable);
            BOOST_TEST_REQUIRE(!ec, ec.message());
            held.push_back(std::move(l));
        }
        BOOST_TEST(held[0].token() != held[1].token());
        BOOST_TEST(co_await eventually([&] { return members_everywhere(servers, "jobs", 3); }));

        // A fourth, and a plain lock of the same resource, are refused.
        auto [full, none] = co_await client.async_acquire("jobs", permits(3), tuple_awaitable);
        BOOST_TEST(full == redlock::error::not_acquired);
        BOOST_TEST(!none.held());
        auto [plain, no_lock] = co_await client.async_acquire("jobs", options(), tuple_awaitable);
        BOOST_TEST(plain == redlock::error::not_acquired);
        BOOST_TEST(co_await eventually([&] { return members_everywhere(servers, "jobs", 3); }));

        // One released: its place is free for the next, and only one place.
        co_await held[1].async_release(asio::use_awaitable);
        BOOST_TEST(co_await eventually([&] { return members_everywhere(servers, "jobs", 2); }));
        auto [ec4, fourth] = co_await client.async_acquire("jobs", permits(3), tuple_awaitable);
        BOOST_TEST(!ec4, ec4.message());
        auto [ec5, fifth] = co_await client.async_acquire("jobs", permits(3), tuple_awaitable);
        BOOST_TEST(ec5 == redlock::error::not_acquired);

        // A permit released twice is not ours the second time; the others' are untouched.
        auto [twice] = co_await held[1].async_release(tuple_awaitable);
        BOOST_TEST(twice == redlock::error::not_owner);
        co_await held[0].async_extend(5s, asio::use_awaitable);
        co_await held[0].async_release(asio::use_awaitable);
        co_await held[2].async_release(asio::use_awaitable);
        co_await fourth.async_release(asio::use_awaitable);
        BOOST_TEST(co_await eventually([&] { return nothing_left(servers, "jobs"); }));
    }());
}

BOOST_DATA_TEST_CASE(callers_that_disagree_on_the_count_are_told_at_once, node_counts, n) {
    auto servers = start_redis_servers(static_cast<std::size_t>(n));
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto first = co_await client.async_acquire("pool", permits(2), asio::use_awaitable);
        BOOST_TEST(co_await eventually([&] { return members_everywhere(servers, "pool", 1); }));

        // Waiting would not change the count: the error comes at once, not when the wait ends.
        redlock::diagnostics diag;
        const auto start = std::chrono::steady_clock::now();
        auto [ec, l] = co_await client.async_acquire("pool", permits(3, 10s, 60s), diag, tuple_awaitable);
        BOOST_TEST(ec == redlock::error::permits_mismatch, ec.message());
        BOOST_TEST((std::chrono::steady_clock::now() - start < 30s));
        BOOST_TEST(diag.message.find("permits = 2, this acquire asks for 3") != std::string::npos,
                   diag.message);
        BOOST_TEST(co_await eventually([&] { return members_everywhere(servers, "pool", 1); }));

        // Once no permit is in use, a new count holds.
        co_await first.async_release(asio::use_awaitable);
        BOOST_TEST(co_await eventually([&] { return nothing_left(servers, "pool"); }));
        auto [ec3, third] = co_await client.async_acquire("pool", permits(3), tuple_awaitable);
        BOOST_TEST(!ec3, ec3.message());
        co_await third.async_release(asio::use_awaitable);
    }());
}

BOOST_DATA_TEST_CASE(a_waiter_gets_the_place_a_release_frees, node_counts, n) {
    auto servers = start_redis_servers(static_cast<std::size_t>(n));
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto a = co_await client.async_acquire("slots", permits(2), asio::use_awaitable);
        auto b = co_await client.async_acquire("slots", permits(2), asio::use_awaitable);
        const auto refused_before = client.metrics().contended;
        std::optional<redlock::lease> waited;
        boost::system::error_code waiter_ec;
        asio::co_spawn(
            ioc,
            [&]() -> asio::awaitable<void> {
                auto [ec, l] = co_await client.async_acquire("slots", permits(2, 10s, 30s), tuple_awaitable);
                waiter_ec = ec;
                if (!ec) waited.emplace(std::move(l));
            },
            asio::detached);
        BOOST_TEST_REQUIRE(co_await eventually([&] { return client.metrics().contended > refused_before; }));
        BOOST_TEST(!waited.has_value());  // both places taken: it tried, and was refused
        co_await b.async_release(asio::use_awaitable);
        BOOST_TEST(co_await eventually([&] { return waited.has_value() || waiter_ec; }, 20s));
        BOOST_TEST(!waiter_ec, waiter_ec.message());
        BOOST_TEST_REQUIRE(waited.has_value());
        BOOST_TEST(waited->held());
        BOOST_TEST(co_await eventually([&] { return members_everywhere(servers, "slots", 2); }));
        co_await waited->async_release(asio::use_awaitable);
        co_await a.async_release(asio::use_awaitable);
        BOOST_TEST(co_await eventually([&] { return nothing_left(servers, "slots"); }));
    }());
}

BOOST_DATA_TEST_CASE(the_watchdog_keeps_a_permit_past_its_ttl_and_an_unrenewed_one_comes_back, node_counts,
                     n) {
    auto servers = start_redis_servers(static_cast<std::size_t>(n));
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto kept_options = permits(1, 1500ms);
        kept_options.watchdog = true;
        auto kept = co_await client.async_acquire("renewed", kept_options, asio::use_awaitable);
        // Not renewed: its permit is free again once its ttl has passed on the servers.
        auto lapsing = co_await client.async_acquire("lapsing", permits(1, 300ms), asio::use_awaitable);
        co_await sleep_for(2500ms);
        auto [ec, other] = co_await client.async_acquire("renewed", permits(1), tuple_awaitable);
        BOOST_TEST(ec == redlock::error::not_acquired);
        BOOST_TEST(kept.held());
        auto [ec2, next] = co_await client.async_acquire("lapsing", permits(1), tuple_awaitable);
        BOOST_TEST(!ec2, ec2.message());
        auto [lost] = co_await lapsing.async_extend(1s, tuple_awaitable);
        BOOST_TEST(lost == redlock::error::lock_lost);
        co_await next.async_release(asio::use_awaitable);
        co_await kept.async_release(asio::use_awaitable);
        BOOST_TEST(co_await eventually([&] { return nothing_left(servers, "renewed"); }));
    }());
}

// The scripts on their own: a permit whose expiry has passed by the server's clock is nobody's,
// even before anything removed it; it is neither extended nor released, and it frees its place.
// The count is the member "#permits", scored -K, and goes with the last permit.
BOOST_AUTO_TEST_CASE(an_expired_permit_is_not_extended_released_or_counted) {
    auto servers = start_redis_servers(1);
    const auto& s = *servers[0];
    const auto key = lock_key("old");
    const std::vector<std::string> semaphore_keys{key, key_tag("old") + ":rw"};
    const auto eval = [&](const redlock::redis::script& script, std::vector<std::string> keys,
                          std::vector<std::string> args) {
        std::vector<std::string> cmd{"EVAL", std::string(script.source), std::to_string(keys.size())};
        cmd.insert(cmd.end(), keys.begin(), keys.end());
        cmd.insert(cmd.end(), args.begin(), args.end());
        return s.command(cmd);
    };
    const auto server_ms = [&] {
        auto t = s.command({"TIME"});
        return std::stoll(t.elements[0].str) * 1000 + std::stoll(t.elements[1].str) / 1000;
    };
    s.command({"ZADD", key, std::to_string(server_ms() - 1000), "gone", "-1", "#permits"});
    BOOST_TEST(eval(redlock::scripts::semaphore_extend, {key}, {"gone", "5000"}).integer == 0);
    BOOST_TEST(s.command({"ZSCORE", key, "gone"}).str != "");  // extend changed nothing
    BOOST_TEST(
        eval(redlock::scripts::semaphore_release, {key, key_tag("old") + ":released"}, {"gone"}).integer ==
        0);
    BOOST_TEST(s.command({"EXISTS", key}).integer == 0);  // but it is gone, with its count

    s.command({"ZADD", key, std::to_string(server_ms() - 1000), "gone", "-1", "#permits"});
    auto granted = eval(redlock::scripts::semaphore_acquire, semaphore_keys, {"new", "5000", "1"});
    BOOST_TEST_REQUIRE(granted.elements.size() == 2u);
    BOOST_TEST(granted.elements[0].integer == 1);
    BOOST_TEST(s.command({"ZCOUNT", key, "0", "+inf"}).integer == 1);  // "new" alone holds
    BOOST_TEST(s.command({"ZSCORE", key, "#permits"}).str == "-1");
    const auto pttl = s.command({"PTTL", key}).integer;  // the set expires with its last permit
    BOOST_TEST(pttl > 0);
    BOOST_TEST(pttl <= 5000);
    auto full = eval(redlock::scripts::semaphore_acquire, semaphore_keys, {"next", "5000", "1"});
    BOOST_TEST(full.elements[0].integer == 0);
    BOOST_TEST(full.elements[1].integer > 0);  // until the first permit frees
    BOOST_TEST(full.elements[1].integer <= 5000);
    auto retry = eval(redlock::scripts::semaphore_acquire, semaphore_keys, {"new", "5000", "1"});
    BOOST_TEST(retry.elements[0].integer == 1);  // already ours: granted again
    {
        // Our own permit, lapsed, in a full set: it is not ours any more, so a retry is refused.
        const auto full_key = lock_key("lapsed");
        const std::vector<std::string> full_keys{full_key, key_tag("lapsed") + ":rw"};
        s.command({"ZADD", full_key, std::to_string(server_ms() - 1000), "mine",
                   std::to_string(server_ms() + 5000), "theirs", "-1", "#permits"});
        auto lapsed = eval(redlock::scripts::semaphore_acquire, full_keys, {"mine", "5000", "1"});
        BOOST_TEST(lapsed.elements[0].integer == 0);
        BOOST_TEST(lapsed.elements[1].integer > 0);                     // until "theirs" lapses
        BOOST_TEST(s.command({"ZSCORE", full_key, "mine"}).str == "");  // the lapsed permit went
        BOOST_TEST(s.command({"ZCARD", full_key}).integer == 2);
    }

    // Another count while a permit is held: refused, naming the count in use; once the set's
    // permits are all given back (or expired), a new count takes over.
    auto other_count = eval(redlock::scripts::semaphore_acquire, semaphore_keys, {"third", "5000", "3"});
    BOOST_TEST(other_count.elements[0].integer == -1);
    BOOST_TEST(other_count.elements[1].integer == 1);
    s.command({"ZADD", key, "XX", std::to_string(server_ms() - 1000), "new"});
    auto recount = eval(redlock::scripts::semaphore_acquire, semaphore_keys, {"third", "5000", "3"});
    BOOST_TEST(recount.elements[0].integer == 1);
    BOOST_TEST(s.command({"ZSCORE", key, "#permits"}).str == "-3");
    BOOST_TEST(s.command({"ZSCORE", key, "new"}).str == "");  // the expired permit went

    // A longer permit stretches the key's expiry; a shorter one does not shorten it.
    eval(redlock::scripts::semaphore_acquire, semaphore_keys, {"long", "60000", "3"});
    BOOST_TEST(s.command({"PTTL", key}).integer > 5000);
    eval(redlock::scripts::semaphore_extend, {key}, {"third", "1000"});
    BOOST_TEST(s.command({"PTTL", key}).integer > 5000);
    // Giving one back keeps the others and the count; the last one takes the key.
    BOOST_TEST(
        eval(redlock::scripts::semaphore_release, {key, key_tag("old") + ":released"}, {"third"}).integer ==
        1);
    BOOST_TEST(s.command({"ZSCORE", key, "#permits"}).str == "-3");
    BOOST_TEST(
        eval(redlock::scripts::semaphore_release, {key, key_tag("old") + ":released"}, {"long"}).integer ==
        1);
    BOOST_TEST(s.command({"EXISTS", key}).integer == 0);

    // Another kind of lock at the key: refused with its PTTL, nothing written.
    s.command({"SET", lock_key("plain"), "tok", "PX", "7000"});
    auto other = eval(redlock::scripts::semaphore_acquire, {lock_key("plain"), key_tag("plain") + ":rw"},
                      {"new", "5000", "1"});
    BOOST_TEST(other.elements[0].integer == 0);
    BOOST_TEST(other.elements[1].integer > 0);
    BOOST_TEST(s.command({"GET", lock_key("plain")}).str == "tok");
    BOOST_TEST(eval(redlock::scripts::semaphore_release, {lock_key("plain"), key_tag("plain") + ":released"},
                    {"tok"})
                   .integer == 0);
    BOOST_TEST(eval(redlock::scripts::semaphore_extend, {lock_key("plain")}, {"tok", "5000"}).integer == 0);
}

BOOST_AUTO_TEST_SUITE_END()
