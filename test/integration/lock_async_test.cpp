// SPDX-License-Identifier: BSL-1.0
// Asio conventions of the lock operations: every completion token, cancellation through slots
// and of the awaiting coroutine, and one client shared by an io_context run on 4 threads.
#include "support/lock_helpers.hpp"
#include "support/printing.hpp"
#include "support/redis_server.hpp"
#include "support/run_coro.hpp"
#include <redlock/redlock.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace asio = boost::asio;
using namespace std::chrono_literals;
using boost::system::error_code;
using redlock::test::eventually;
using redlock::test::holder_on;
using redlock::test::lock_config;
using redlock::test::lock_key;
using redlock::test::no_key_anywhere;
using redlock::test::options;
using redlock::test::run_coro;
using redlock::test::sleep_for;
using redlock::test::start_redis_servers;
using clock_type = std::chrono::steady_clock;

namespace {

constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);

}  // namespace

BOOST_AUTO_TEST_SUITE(lock_async_test)

BOOST_AUTO_TEST_CASE(every_completion_token_works_for_acquire_extend_and_release) {
    auto servers = start_redis_servers(1);
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), lock_config(servers));

    // Plain callbacks.
    {
        std::optional<redlock::lease> got;
        error_code acquire_ec = redlock::error::internal, extend_ec = redlock::error::internal,
                   release_ec = redlock::error::internal;
        client.async_acquire("cb", options(), [&](error_code ec, redlock::lease l) {
            acquire_ec = ec;
            got.emplace(std::move(l));
            got->async_extend(20s, [&](error_code ec2) {
                extend_ec = ec2;
                got->async_release([&](error_code ec3) { release_ec = ec3; });
            });
        });
        ioc.restart();
        for (int i = 0; i < 200 && release_ec == redlock::error::internal; ++i)
            ioc.run_one_for(50ms);
        BOOST_TEST(!acquire_ec);
        BOOST_TEST(!extend_ec);
        BOOST_TEST(!release_ec);
        BOOST_TEST(no_key_anywhere(servers, "cb"));
    }

    // use_future: the io_context runs on another thread while this one blocks on the futures.
    {
        auto guard = asio::make_work_guard(ioc);
        ioc.restart();
        std::thread runner([&] { ioc.run(); });
        auto f1 = client.async_acquire("future", options(), asio::use_future);
        auto l = f1.get();
        BOOST_TEST(l.held());
        BOOST_TEST(holder_on(*servers[0], "future") == l.token());
        l.async_extend(20s, asio::use_future).get();
        l.async_release(asio::use_future).get();
        BOOST_TEST(no_key_anywhere(servers, "future"));
        // A failure arrives as a system_error from get().
        auto held = client.async_acquire("future", options(), asio::use_future).get();
        auto f2 = client.async_acquire("future", options(), asio::use_future);
        BOOST_CHECK_EXCEPTION(
            f2.get(), boost::system::system_error,
            [](const boost::system::system_error& e) { return e.code() == redlock::error::not_acquired; });
        held.async_release(asio::use_future).get();
        // The connections keep background work pending, so run() would not return by itself.
        guard.reset();
        ioc.stop();
        runner.join();
    }

    // use_awaitable, deferred, as_tuple.
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto a = co_await client.async_acquire("aw", options(), asio::use_awaitable);
        co_await a.async_extend(20s, asio::use_awaitable);
        co_await a.async_release(asio::use_awaitable);

        auto deferred_acquire = client.async_acquire("def", options(), asio::deferred);
        auto d = co_await std::move(deferred_acquire)(asio::use_awaitable);
        auto deferred_extend = d.async_extend(20s);  // deferred is the default token
        co_await std::move(deferred_extend)(asio::use_awaitable);
        auto deferred_release = d.async_release(asio::deferred);
        co_await std::move(deferred_release)(asio::use_awaitable);

        auto [e1, t] = co_await client.async_acquire("tup", options(), tuple_awaitable);
        BOOST_TEST(!e1);
        auto [e2] = co_await t.async_extend(20s, tuple_awaitable);
        BOOST_TEST(!e2);
        auto [e3] = co_await t.async_release(tuple_awaitable);
        BOOST_TEST(!e3);
        for (const char* r : {"aw", "def", "tup"})
            BOOST_TEST(no_key_anywhere(servers, r));
        BOOST_TEST(client.metrics().acquired == 6u);
        BOOST_TEST(client.metrics().released == 6u);
        BOOST_TEST(client.metrics().extended == 5u);
    }());
}

BOOST_AUTO_TEST_CASE(cancelling_a_waiting_acquire_completes_it_at_once_and_leaves_the_holder_alone) {
    auto servers = start_redis_servers(5);
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto holder = co_await client.async_acquire("c", options(), asio::use_awaitable);
        asio::cancellation_signal signal;
        std::optional<error_code> result;
        client.async_acquire(
            "c", options(10s, 30s),
            asio::bind_cancellation_slot(signal.slot(), [&](error_code ec, redlock::lease l) {
                result = ec;
                BOOST_TEST(!l.held());
            }));
        co_await sleep_for(150ms);
        BOOST_TEST(!result.has_value());
        const auto cancelled_at = clock_type::now();
        signal.emit(asio::cancellation_type::terminal);
        co_await eventually([&] { return result.has_value(); });
        BOOST_TEST_REQUIRE(result.has_value());
        BOOST_TEST(*result == asio::error::operation_aborted);
        BOOST_TEST((clock_type::now() - cancelled_at < 5s));  // not at the end of its 30 s wait
        for (const auto& s : servers)
            BOOST_TEST(holder_on(*s, "c") == holder.token());
        BOOST_TEST(client.metrics().failed_cancelled == 1u);
    }());
}

BOOST_AUTO_TEST_CASE(a_cancelled_coroutine_leaves_no_key_of_ours_on_any_node) {
    // Every node is paused, so the acquire is in the middle of its attempt when the awaiting
    // coroutine loses a race against a timer; when the nodes resume, the SETs they queued run,
    // and the cleanup queued behind them on each connection deletes the keys again.
    auto servers = start_redis_servers(5);
    asio::io_context ioc;
    auto cfg = lock_config(servers);
    cfg.node_timeout = 2000ms;
    redlock::client client(ioc.get_executor(), cfg);
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto warm = co_await client.async_acquire("warm", options(), asio::use_awaitable);
        for (auto& s : servers)
            s->pause();
        using namespace asio::experimental::awaitable_operators;
        auto acquire = client.async_acquire("k", options(), asio::use_awaitable);
        auto timeout = sleep_for(200ms);
        auto winner = co_await (std::move(acquire) || std::move(timeout));
        BOOST_TEST(winner.index() == 1u);  // the timer won: the acquire was cancelled
        for (auto& s : servers)
            s->resume();
        BOOST_TEST(co_await eventually([&] { return no_key_anywhere(servers, "k"); }));
        // And the resource is free for the next owner.
        auto next = co_await client.async_acquire("k", options(), asio::use_awaitable);
        BOOST_TEST(next.held());
    }());
}

BOOST_AUTO_TEST_CASE(cancelling_extend_and_release_completes_them_with_operation_aborted) {
    auto servers = start_redis_servers(1);
    asio::io_context ioc;
    auto cfg = lock_config(servers);
    cfg.node_timeout = 2000ms;
    redlock::client client(ioc.get_executor(), cfg);
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto lease = co_await client.async_acquire("x", options(), asio::use_awaitable);
        servers[0]->pause();
        asio::cancellation_signal signal;
        std::optional<error_code> extended;
        lease.async_extend(
            20s, asio::bind_cancellation_slot(signal.slot(), [&](error_code ec) { extended = ec; }));
        co_await sleep_for(50ms);
        signal.emit(asio::cancellation_type::terminal);
        co_await eventually([&] { return extended.has_value(); });
        BOOST_TEST_REQUIRE(extended.has_value());
        BOOST_TEST(*extended == asio::error::operation_aborted);
        BOOST_TEST(lease.held());  // cancelling an extend does not give up the lease

        std::optional<error_code> released;
        lease.async_release(
            asio::bind_cancellation_slot(signal.slot(), [&](error_code ec) { released = ec; }));
        co_await sleep_for(50ms);
        signal.emit(asio::cancellation_type::terminal);
        co_await eventually([&] { return released.has_value(); });
        BOOST_TEST_REQUIRE(released.has_value());
        BOOST_TEST(*released == asio::error::operation_aborted);
        BOOST_TEST(!lease.held());
        servers[0]->resume();
        // The release was sent before the cancellation: it still runs.
        BOOST_TEST(co_await eventually([&] { return no_key_anywhere(servers, "x"); }));
    }());
}

BOOST_AUTO_TEST_CASE(one_client_shared_by_an_io_context_on_four_threads_keeps_mutual_exclusion) {
    auto servers = start_redis_servers(5);
    asio::io_context ioc;
    auto cfg = lock_config(servers);
    cfg.retry = {1ms, 5ms};
    redlock::client client(ioc.get_executor(), cfg);

    constexpr int coroutines = 40, rounds = 25;
    std::atomic<int> inside{0}, overlaps{0}, failures{0}, finished{0};
    std::atomic<long> counter{0};
    auto worker = [&](int) -> asio::awaitable<void> {
        for (int i = 0; i < rounds; ++i) {
            auto [ec, lease] = co_await client.async_acquire("shared", options(10s, 30s), tuple_awaitable);
            if (ec) {
                ++failures;
                continue;
            }
            if (inside.fetch_add(1) != 0) ++overlaps;
            // Read, yield to the other threads, write: a lost update shows up in the count.
            const long seen = counter.load();
            co_await sleep_for(100us);
            counter.store(seen + 1);
            inside.fetch_sub(1);
            auto [rec] = co_await lease.async_release(tuple_awaitable);
            if (rec) ++failures;
        }
        // The connections never run out of work: stop the threads when the last worker ends.
        if (++finished == coroutines) ioc.stop();
    };
    for (int c = 0; c < coroutines; ++c) {
        auto w = worker(c);
        asio::co_spawn(ioc, std::move(w), asio::detached);
    }
    std::vector<std::thread> threads;
    const auto start = clock_type::now();
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&] { ioc.run_for(120s); });
    for (auto& t : threads)
        t.join();
    BOOST_TEST_MESSAGE(
        "4 threads: "
        << coroutines * rounds << " critical sections in "
        << std::chrono::duration_cast<std::chrono::milliseconds>(clock_type::now() - start).count() << " ms");
    BOOST_TEST(finished.load() == coroutines);
    BOOST_TEST(failures.load() == 0);
    BOOST_TEST(overlaps.load() == 0);
    BOOST_TEST(counter.load() == coroutines * rounds);
    BOOST_TEST(client.metrics().acquired == static_cast<std::uint64_t>(coroutines * rounds));
}

BOOST_AUTO_TEST_SUITE_END()
