// SPDX-License-Identifier: BSL-1.0
// The watchdog and scoped leases (async_with_lock, lease::async_wait_lost), on real servers, for
// N = 1 and N = 5.
#include "support/lock_helpers.hpp"
#include "support/printing.hpp"
#include "support/redis_server.hpp"
#include "support/run_coro.hpp"
#include "support/sanitizer.hpp"
#include <redlock/redlock.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace asio = boost::asio;
namespace data = boost::unit_test::data;
using namespace std::chrono_literals;
using boost::system::error_code;
using redlock::test::command_calls;
using redlock::test::eventually;
using redlock::test::granted_in;
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
const auto node_counts = data::make({1, 5});

redlock::lock_options short_lease(std::chrono::milliseconds ttl = 1000ms) {
    auto o = options(ttl);
    o.renew_every = ttl / 4;
    return o;
}

// PEXPIREs the servers ran so far: the extend scripts'.
std::uint64_t pexpire_calls(const redlock::test::redis_server& s) {
    return command_calls(s, "pexpire");
}

std::uint64_t pexpire_calls(const redlock::test::server_list& servers) {
    std::uint64_t n = 0;
    for (const auto& s : servers)
        n += pexpire_calls(*s);
    return n;
}

// The error code carried by an exception thrown out of async_with_lock, or {} for another kind.
error_code code_of(const std::exception_ptr& ep) {
    if (!ep) return {};
    try {
        std::rethrow_exception(ep);
    } catch (const boost::system::system_error& e) {
        return e.code();
    } catch (...) {
        return {};
    }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(watchdog_test)

BOOST_DATA_TEST_CASE(keeps_a_1s_lease_alive_through_a_4s_body, node_counts, n) {
    auto servers = start_redis_servers(static_cast<std::size_t>(n));
    asio::io_context ioc;
    redlock::client holder(ioc.get_executor(), lock_config(servers));
    redlock::client rival(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        int samples = 0;
        int rival_attempts = 0;
        std::string token;
        auto body = [&](redlock::lease& l) -> asio::awaitable<int> {
            token = l.token();
            // The acquire completed at a quorum; the other SETs land a moment later.
            BOOST_TEST(co_await eventually(
                [&] { return redlock::test::nodes_holding(servers, "w", l.token()) == servers.size(); }));
            const auto end = clock_type::now() + 4s;
            while (clock_type::now() < end) {
                for (const auto& s : servers) {
                    BOOST_TEST(holder_on(*s, "w") == l.token());
                    BOOST_TEST(s->command({"PTTL", lock_key("w")}).integer > 0);
                }
                ++samples;
                if (samples % 10 == 0) {
                    auto [ec, other] = co_await rival.async_acquire("w", options(), tuple_awaitable);
                    BOOST_TEST(ec == redlock::error::not_acquired);
                    ++rival_attempts;
                }
                co_await sleep_for(50ms);
            }
            BOOST_TEST(l.held());
            BOOST_TEST(holder.metrics().watchdogs_running == 1u);
            co_return 42;
        };
        int result = co_await redlock::async_with_lock(holder, "w", short_lease(), body, asio::use_awaitable);
        BOOST_TEST(result == 42);
        BOOST_TEST(samples >= 40);
        BOOST_TEST(rival_attempts >= 4);
        // The scope released it: the rival gets it at the first try.
        auto [ec, taken] = co_await rival.async_acquire("w", options(), tuple_awaitable);
        BOOST_TEST(!ec, ec.message());
        BOOST_TEST(taken.token() != token);
        // No renewal after the scope: the rival's own commands are SETs and releases.
        const auto pexpires = pexpire_calls(servers);
        co_await sleep_for(800ms);
        BOOST_TEST(pexpire_calls(servers) == pexpires);
        const auto m = holder.metrics();
        BOOST_TEST(m.watchdog_renewals >= 12u);  // 4 s / 250 ms, give or take the edges
        BOOST_TEST(m.leases_lost == 0u);
        BOOST_TEST(m.released == 1u);
        BOOST_TEST(m.watchdogs_running == 0u);
        co_await taken.async_release(tuple_awaitable);
    }());
}

BOOST_DATA_TEST_CASE(with_diagnostics_the_body_sees_which_nodes_granted, node_counts, n) {
    auto servers = start_redis_servers(static_cast<std::size_t>(n));
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        redlock::diagnostics diag;
        std::size_t granted_in_body = 0;
        auto body = [&](redlock::lease&) -> asio::awaitable<void> {
            granted_in_body += granted_in(diag);
            co_return;
        };
        co_await redlock::async_with_lock(client, "g", short_lease(), diag, body, asio::use_awaitable);
        BOOST_TEST(diag.nodes.size() == servers.size());
        BOOST_TEST(granted_in_body >= servers.size() / 2 + 1);
        BOOST_TEST(co_await eventually([&] { return no_key_anywhere(servers, "g"); }));
    }());
}

BOOST_DATA_TEST_CASE(a_body_that_throws_releases_and_the_exception_propagates, node_counts, n) {
    auto servers = start_redis_servers(static_cast<std::size_t>(n));
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto body = [&](redlock::lease&) -> asio::awaitable<void> {
            co_await sleep_for(300ms);
            throw std::runtime_error("body failed");
        };
        bool caught = false;
        try {
            co_await redlock::async_with_lock(client, "t", short_lease(), body, asio::use_awaitable);
        } catch (const std::runtime_error& e) {
            caught = std::string(e.what()) == "body failed";
        }
        BOOST_TEST(caught);
        BOOST_TEST(co_await eventually([&] { return no_key_anywhere(servers, "t"); }));
        const auto before = pexpire_calls(servers);
        co_await sleep_for(800ms);  // > 3 renewal intervals
        BOOST_TEST(pexpire_calls(servers) == before);
    }());
}

BOOST_DATA_TEST_CASE(cancelling_the_caller_cancels_the_body_then_releases, node_counts, n) {
    auto servers = start_redis_servers(static_cast<std::size_t>(n));
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        asio::cancellation_signal cancel;
        bool body_saw_cancel = false;
        auto body = [&](redlock::lease&) -> asio::awaitable<void> {
            try {
                co_await sleep_for(30s);
            } catch (const boost::system::system_error& e) {
                body_saw_cancel = e.code() == asio::error::operation_aborted;
                throw;
            }
        };
        std::optional<std::exception_ptr> outcome;
        redlock::async_with_lock(
            client, "c", short_lease(), body,
            asio::bind_cancellation_slot(cancel.slot(), [&](std::exception_ptr ep) { outcome = ep; }));
        // The body runs under the lock: every node holds the scope's token.
        BOOST_TEST(co_await eventually([&] {
            return redlock::test::nodes_holding(servers, "c", holder_on(*servers[0], "c")) == servers.size();
        }));
        co_await sleep_for(400ms);  // renewals come and go meanwhile
        BOOST_TEST(redlock::test::nodes_holding(servers, "c", holder_on(*servers[0], "c")) == servers.size());
        cancel.emit(asio::cancellation_type::terminal);
        BOOST_TEST(co_await eventually([&] { return outcome.has_value(); }));
        BOOST_TEST_REQUIRE(outcome.has_value());
        BOOST_TEST(body_saw_cancel);
        BOOST_TEST(code_of(*outcome) == asio::error::operation_aborted);
        BOOST_TEST(co_await eventually([&] { return no_key_anywhere(servers, "c"); }));
    }());
}

BOOST_DATA_TEST_CASE(deleting_the_key_behind_the_holder_loses_the_lease_at_the_next_renewal, node_counts, n) {
    auto servers = start_redis_servers(static_cast<std::size_t>(n));
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        redlock::lease* held = nullptr;
        std::optional<clock_type::time_point> cancelled_at;
        auto body = [&](redlock::lease& l) -> asio::awaitable<int> {
            held = &l;
            try {
                co_await sleep_for(30s);
            } catch (const boost::system::system_error&) {
                cancelled_at = clock_type::now();
            }
            co_return 7;  // swallows the cancellation: the result must still be lock_lost
        };
        std::optional<std::exception_ptr> outcome;
        // Renewed every 500 ms, valid for 2 s: the renewal after the deletion comes long before
        // the validity would run out.
        redlock::async_with_lock(client, "d", short_lease(2000ms), body,
                                 [&](std::exception_ptr ep, int) { outcome = ep; });
        BOOST_TEST(co_await eventually([&] { return held != nullptr; }));
        co_await sleep_for(300ms);
        for (const auto& s : servers)
            s->command({"DEL", lock_key("d")});
        const auto deleted_at = clock_type::now();
        const auto deadline = held->valid_until();
        BOOST_TEST(co_await eventually([&] { return outcome.has_value(); }, 5s));
        BOOST_TEST_REQUIRE(cancelled_at.has_value());
        // Lost when a renewal found the key gone: before the validity ran out, which is the
        // only other way to lose it.
        BOOST_TEST((*cancelled_at > deleted_at));
        BOOST_TEST((*cancelled_at < deadline));
        BOOST_TEST_REQUIRE(outcome.has_value());
        BOOST_TEST(code_of(*outcome) == redlock::error::lock_lost);
        BOOST_TEST(client.metrics().leases_lost == 1u);
        BOOST_TEST(client.metrics().watchdogs_running == 0u);  // a loss stops it too
        const auto before = pexpire_calls(servers);
        co_await sleep_for(800ms);
        BOOST_TEST(pexpire_calls(servers) == before);
        BOOST_TEST(no_key_anywhere(servers, "d"));
    }());
}

BOOST_DATA_TEST_CASE(a_frozen_majority_loses_the_lease_at_the_validity_deadline, node_counts, n) {
    auto servers = start_redis_servers(static_cast<std::size_t>(n));
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        redlock::lease* held = nullptr;
        std::optional<clock_type::time_point> cancelled_at, deadline;
        auto body = [&](redlock::lease& l) -> asio::awaitable<void> {
            held = &l;
            try {
                co_await sleep_for(30s);
            } catch (const boost::system::system_error&) {
                cancelled_at = clock_type::now();
                deadline = l.valid_until();  // the last renewal's, whenever its reply landed
                throw;
            }
        };
        std::optional<std::exception_ptr> outcome;
        redlock::async_with_lock(client, "f", short_lease(), body,
                                 [&](std::exception_ptr ep) { outcome = ep; });
        BOOST_TEST(co_await eventually([&] { return held != nullptr; }));
        co_await sleep_for(600ms);  // a few renewals first
        const std::size_t majority = servers.size() / 2 + 1;
        for (std::size_t i = 0; i < majority; ++i)
            servers[i]->pause();
        BOOST_TEST(co_await eventually([&] { return outcome.has_value(); }));
        for (std::size_t i = 0; i < majority; ++i)
            servers[i]->resume();
        BOOST_TEST_REQUIRE(cancelled_at.has_value());
        // At the deadline: never before it, and not a renewal period (ttl/4) or more after it,
        // where a loss would be if it waited for a renewal's timeout instead.
        BOOST_TEST((*cancelled_at >= *deadline));
        BOOST_TEST(
            (*cancelled_at < *deadline + 250ms),
            "cancelled "
                << std::chrono::duration_cast<std::chrono::milliseconds>(*cancelled_at - *deadline).count()
                << " ms after the deadline");
        BOOST_TEST_REQUIRE(outcome.has_value());
        BOOST_TEST(code_of(*outcome) == redlock::error::lock_lost);
        // Once the nodes are back, the release queued at the loss clears what is left.
        BOOST_TEST(co_await eventually([&] { return no_key_anywhere(servers, "f"); }));
        const auto before = pexpire_calls(servers);
        co_await sleep_for(800ms);
        BOOST_TEST(pexpire_calls(servers) == before);
    }());
}

BOOST_DATA_TEST_CASE(max_hold_caps_how_long_the_watchdog_keeps_a_lease, node_counts, n) {
    auto servers = start_redis_servers(static_cast<std::size_t>(n));
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto o = short_lease(3000ms);
        o.max_hold = 1500ms;
        auto body = [&](redlock::lease&) -> asio::awaitable<void> { co_await sleep_for(30s); };
        const auto start = clock_type::now();
        auto [ep] = co_await redlock::async_with_lock(client, "h", o, body, tuple_awaitable);
        const auto took = clock_type::now() - start;
        BOOST_TEST(code_of(ep) == redlock::error::lock_lost);
        // At max_hold, not when the key the last renewal extended would run out (a ttl later,
        // 3.75 s or more: the renewals come every 750 ms).
        BOOST_TEST((took >= 1500ms));
        BOOST_TEST((took < 1500ms + 1500ms));
        BOOST_TEST(co_await eventually([&] { return no_key_anywhere(servers, "h"); }));
    }());
}

BOOST_DATA_TEST_CASE(wait_lost_on_plain_leases_with_and_without_the_watchdog, node_counts, n) {
    auto servers = start_redis_servers(static_cast<std::size_t>(n));
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        // With the watchdog: alive past its ttl, lost once the key is deleted.
        auto o = short_lease(600ms);
        o.watchdog = true;
        auto kept = co_await client.async_acquire("p1", o, asio::use_awaitable);
        std::optional<error_code> kept_end;
        kept.async_wait_lost([&](error_code ec) { kept_end = ec; });
        co_await sleep_for(1500ms);
        BOOST_TEST(!kept_end.has_value());
        BOOST_TEST(kept.held());
        for (const auto& s : servers)
            s->command({"DEL", lock_key("p1")});
        BOOST_TEST(co_await eventually([&] { return kept_end.has_value(); }));
        BOOST_TEST((kept_end == error_code(redlock::error::lock_lost)));
        BOOST_TEST(!kept.held());

        // Without it: lost when its validity runs out.
        auto plain = co_await client.async_acquire("p2", options(300ms), asio::use_awaitable);
        const auto deadline = plain.valid_until();
        auto [ec] = co_await plain.async_wait_lost(tuple_awaitable);
        BOOST_TEST(ec == redlock::error::lock_lost);
        BOOST_TEST((clock_type::now() >= deadline));
        BOOST_TEST(!plain.held());

        // Released: the wait ends without an error, and a late wait completes at once.
        auto released = co_await client.async_acquire("p3", o, asio::use_awaitable);
        std::optional<error_code> released_end;
        released.async_wait_lost([&](error_code e) { released_end = e; });
        co_await released.async_release(asio::use_awaitable);
        BOOST_TEST(co_await eventually([&] { return released_end.has_value(); }));
        BOOST_TEST((released_end == error_code()));
        auto [late] = co_await released.async_wait_lost(tuple_awaitable);
        BOOST_TEST(!late);

        // Cancelling a wait leaves the lease alone.
        auto third = co_await client.async_acquire("p4", o, asio::use_awaitable);
        asio::cancellation_signal cancel;
        std::optional<error_code> cancelled;
        third.async_wait_lost(
            asio::bind_cancellation_slot(cancel.slot(), [&](error_code e) { cancelled = e; }));
        co_await sleep_for(50ms);
        cancel.emit(asio::cancellation_type::terminal);
        BOOST_TEST(co_await eventually([&] { return cancelled.has_value(); }));
        BOOST_TEST((cancelled == error_code(asio::error::operation_aborted)));
        co_await sleep_for(700ms);
        BOOST_TEST(third.held());
        co_await third.async_release(asio::use_awaitable);

        redlock::lease empty;
        auto [empty_ec] = co_await empty.async_wait_lost(tuple_awaitable);
        BOOST_TEST(empty_ec == redlock::error::not_owner);
    }());
}

// As many leases as half of a loaded core keeps renewed, with room to spare: this checks that the
// renewals are batched and keep every lease, not how many leases a core can keep (a speed, for a
// benchmark). Measured here: a core to itself keeps 100,000 (267,000 renewals in 5 s, about
// 60,000 a second at -O3); half a core (a spinning neighbour) lost 55,793 of them, and the suite
// pinned to one core failed 96,171 of their releases. 20,000 need 15,000 renewals a second. ASan
// at -O0 renews about 12,000 a second on a quiet core; 5,000 need 3,750 and held on half a core.
BOOST_AUTO_TEST_CASE(one_client_keeps_many_leases_alive_with_batched_renewals) {
    auto servers = start_redis_servers(1);
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), lock_config(servers));
    constexpr std::size_t lease_count = redlock::test::under_sanitizer ? 5000 : 20000;
    constexpr std::size_t workers = 100;
    run_coro(
        ioc,
        [&]() -> asio::awaitable<void> {
            auto o = options(4000ms);
            o.watchdog = true;
            o.node_timeout = 2000ms;  // a loaded single core must not turn into failed renewals
            std::vector<redlock::lease> held(lease_count);
            std::size_t failures = 0;
            std::size_t finished = 0;
            auto ex = co_await asio::this_coro::executor;
            const auto acquiring_since = std::chrono::steady_clock::now();
            for (std::size_t w = 0; w < workers; ++w) {
                asio::co_spawn(
                    ex,
                    [&, w]() -> asio::awaitable<void> {
                        for (std::size_t i = w; i < lease_count; i += workers) {
                            auto [ec, l] =
                                co_await client.async_acquire("s:" + std::to_string(i), o, tuple_awaitable);
                            if (ec) {
                                ++failures;
                            } else {
                                held[i] = std::move(l);
                            }
                        }
                        ++finished;
                    },
                    asio::detached);
            }
            BOOST_TEST_REQUIRE(co_await eventually([&] { return finished == workers; }, 60s));
            BOOST_TEST_REQUIRE(failures == 0u);
            const std::chrono::duration<double> acquiring =
                std::chrono::steady_clock::now() - acquiring_since;

            const auto renewals_before = client.metrics().watchdog_renewals;
            const auto scripts_before =
                command_calls(*servers[0], "evalsha") + command_calls(*servers[0], "eval");
            co_await sleep_for(5000ms);  // past the 4 s ttl: without renewals every key would be gone
            const auto renewals = client.metrics().watchdog_renewals - renewals_before;
            const auto scripts =
                command_calls(*servers[0], "evalsha") + command_calls(*servers[0], "eval") - scripts_before;
            BOOST_TEST_MESSAGE(lease_count << " leases acquired in " << acquiring.count()
                                           << " s: " << renewals << " renewals in 5 s by " << scripts
                                           << " script calls");
            BOOST_TEST(redlock::test::keys_but_bookkeeping(*servers[0]) ==
                       static_cast<std::int64_t>(lease_count));
            std::size_t still_held = 0;
            for (const auto& l : held)
                still_held += l.held() ? 1 : 0;
            BOOST_TEST(still_held == lease_count);
            BOOST_TEST(client.metrics().leases_lost == 0u);
            // Each lease renewed about every 1.33 s, and many per script call: the extends queued
            // within 2 ms of each other go together (extend_batcher::window), and leases come
            // due as densely as they were acquired. A loaded machine (CI's sanitized run: 17.8
            // per call) acquires them more slowly, so it is held to half the leases acquired in
            // a window (at least 2, where no batching gives 1), at most 20.
            BOOST_TEST(renewals >= 2 * lease_count);
            const double per_window = static_cast<double>(lease_count) * 0.002 / acquiring.count();
            const double per_call = std::clamp(per_window / 2, 2.0, 20.0);
            BOOST_TEST(static_cast<double>(scripts) * per_call <= static_cast<double>(renewals),
                       scripts << " script calls for " << renewals << " renewals; " << lease_count
                               << " leases acquired in " << acquiring.count() << " s");

            finished = 0;
            std::map<std::string, std::size_t> release_errors;
            for (std::size_t w = 0; w < workers; ++w) {
                asio::co_spawn(
                    ex,
                    [&, w]() -> asio::awaitable<void> {
                        for (std::size_t i = w; i < lease_count; i += workers) {
                            auto [ec] = co_await held[i].async_release(tuple_awaitable);
                            if (ec) {
                                ++failures;
                                ++release_errors[ec.message()];
                            }
                        }
                        ++finished;
                    },
                    asio::detached);
            }
            BOOST_TEST_REQUIRE(co_await eventually([&] { return finished == workers; }, 60s));
            BOOST_TEST(failures == 0u, [&] {
                std::string why;
                for (const auto& [message, count] : release_errors)
                    why += std::to_string(count) + " x " + message + "; ";
                return why;
            }());
            BOOST_TEST(redlock::test::keys_but_bookkeeping(*servers[0]) == 0);
        }(),
        120s);
}

BOOST_AUTO_TEST_CASE(with_lock_and_wait_lost_work_with_every_completion_token) {
    auto servers = start_redis_servers(1);
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), lock_config(servers));
    auto body = [](redlock::lease& l) -> asio::awaitable<std::string> { co_return l.resource(); };

    // Plain callbacks.
    std::optional<std::string> got;
    redlock::async_with_lock(client, "cb", options(), body, [&](std::exception_ptr ep, std::string r) {
        BOOST_TEST(!ep);
        got = r;
    });
    ioc.restart();
    for (int i = 0; i < 200 && !got; ++i)
        ioc.run_one_for(50ms);
    BOOST_TEST((got == std::optional<std::string>("cb")));

    // use_future, with the io_context on another thread.
    {
        auto guard = asio::make_work_guard(ioc);
        ioc.restart();
        std::thread runner([&] { ioc.run(); });
        BOOST_TEST(redlock::async_with_lock(client, "fut", options(), body, asio::use_future).get() == "fut");
        auto held = client.async_acquire("fut-held", options(), asio::use_future).get();
        auto fails = redlock::async_with_lock(client, "fut-held", options(), body, asio::use_future);
        BOOST_CHECK_EXCEPTION(
            fails.get(), boost::system::system_error,
            [](const boost::system::system_error& e) { return e.code() == redlock::error::not_acquired; });
        auto lost = held.async_wait_lost(asio::use_future);
        held.async_release(asio::use_future).get();
        lost.get();  // released, not lost: no exception
        guard.reset();
        ioc.stop();
        runner.join();
    }

    // use_awaitable, deferred, as_tuple.
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        BOOST_TEST(co_await redlock::async_with_lock(client, "aw", options(), body, asio::use_awaitable) ==
                   "aw");
        auto deferred_op = redlock::async_with_lock(client, "def", options(), body);  // deferred by default
        BOOST_TEST(co_await std::move(deferred_op)(asio::use_awaitable) == "def");
        auto [ep, r] = co_await redlock::async_with_lock(client, "tup", options(), body, tuple_awaitable);
        BOOST_TEST(!ep);
        BOOST_TEST(r == "tup");
        auto l = co_await client.async_acquire("wl", options(), asio::use_awaitable);
        auto deferred_wait = l.async_wait_lost();
        co_await l.async_release(asio::use_awaitable);
        co_await std::move(deferred_wait)(asio::use_awaitable);
        for (const char* res : {"cb", "fut", "fut-held", "aw", "def", "tup", "wl"})
            BOOST_TEST(no_key_anywhere(servers, res));
    }());
}

BOOST_AUTO_TEST_CASE(bad_watchdog_options_are_refused) {
    auto servers = start_redis_servers(1);
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto o = options(1000ms);
        o.watchdog = true;
        o.renew_every = 1000ms;  // not below the ttl: the lease would expire between renewals
        auto [ec, l] = co_await client.async_acquire("bad", o, tuple_awaitable);
        BOOST_TEST(ec == redlock::error::invalid_config);
        o.renew_every = 0ms;
        o.max_hold = -1ms;
        auto [ec2, l2] = co_await client.async_acquire("bad", o, tuple_awaitable);
        BOOST_TEST(ec2 == redlock::error::invalid_config);
        BOOST_TEST(no_key_anywhere(servers, "bad"));
    }());
}

BOOST_AUTO_TEST_SUITE_END()
