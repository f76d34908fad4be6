// SPDX-License-Identifier: BSL-1.0
// Fair locks (lock_options::fair) on real servers: FIFO order, the head only, eviction of a
// waiter that stopped refreshing, and nothing left behind by a waiter that gives up.
#include "support/child_process.hpp"
#include "support/lock_helpers.hpp"
#include "support/printing.hpp"
#include "support/redis_server.hpp"
#include "support/run_coro.hpp"
#include "support/tcp_proxy.hpp"
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

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

namespace asio = boost::asio;
namespace data = boost::unit_test::data;
using namespace std::chrono_literals;
using boost::system::error_code;
using redlock::test::background_acquire;
using redlock::test::eventually;
using redlock::test::granted_in;
using redlock::test::held_everywhere;
using redlock::test::key_tag;
using redlock::test::lock_config;
using redlock::test::lock_key;
using redlock::test::options;
using redlock::test::queued;
using redlock::test::queued_everywhere;
using redlock::test::run_coro;
using redlock::test::server_list;
using redlock::test::sleep_for;
using redlock::test::start_redis_servers;
using clock_type = std::chrono::steady_clock;

namespace {

constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);
const auto node_counts = data::make({1, 5});

redlock::lock_options fair(std::chrono::milliseconds wait, std::chrono::milliseconds queue_timeout = 30s) {
    auto o = options(10s, wait);
    o.fair = true;
    o.queue_timeout = queue_timeout;
    // Timed retries far apart: a waiter moves because it was woken, or because its place is due
    // for a refresh.
    o.retry = redlock::retry_config{500ms, 1000ms};
    return o;
}

// A fair waiter that hears no message: it tries again every `retry`, keeping its place 5 s.
redlock::lock_options polling_fair(std::chrono::milliseconds retry) {
    auto o = fair(20s, 5s);
    o.waiting = redlock::wait_strategy::spin;
    o.retry = redlock::retry_config{retry, retry};
    return o;
}

// No lock, queue, deadlines, counter or wake-up subscription of `resource` on any server.
bool nothing_left(const server_list& servers, const std::string& resource) {
    const auto t = key_tag(resource);
    for (const auto& s : servers) {
        if (s->command({"EXISTS", t + ":lock", t + ":queue", t + ":queue:deadlines", t + ":queue:tickets",
                        t + ":queue:handoffs"})
                .integer != 0) {
            return false;
        }
        if (!s->command({"PUBSUB", "SHARDCHANNELS", t + ":wake:*"}).elements.empty()) return false;
    }
    return true;
}

// The waiter's acquire completes within `bound` of `since` and holds the lock; after its
// release nothing is left.
asio::awaitable<void> expect_the_head_holds_it(const server_list& servers, const std::string& resource,
                                               background_acquire& head, clock_type::time_point since,
                                               clock_type::duration bound, const std::string& how) {
    BOOST_TEST_REQUIRE(co_await eventually([&] { return head.result.has_value(); }, 15s));
    const auto waited = clock_type::now() - since;
    BOOST_TEST_MESSAGE(how << " after "
                           << std::chrono::duration_cast<std::chrono::milliseconds>(waited).count() << " ms");
    BOOST_TEST(!*head.result);
    BOOST_TEST((waited < bound));
    BOOST_TEST(head.lease->held());
    co_await head.lease->async_release(asio::use_awaitable);
    BOOST_TEST(co_await eventually([&] { return nothing_left(servers, resource); }));
}

}  // namespace

BOOST_AUTO_TEST_SUITE(fair_test)

// 50 waiters of two clients queue one after the other (each is in every server's queue before
// the next one starts); they get the lock in exactly that order, each woken alone.
BOOST_DATA_TEST_CASE(fifty_waiters_get_the_lock_in_the_order_they_queued, node_counts, n) {
    auto servers = start_redis_servers(static_cast<std::size_t>(n));
    asio::io_context ioc;
    redlock::client holder(ioc.get_executor(), lock_config(servers));
    redlock::client even(ioc.get_executor(), lock_config(servers));
    redlock::client odd(ioc.get_executor(), lock_config(servers));
    constexpr int waiters = 50;
    run_coro(
        ioc,
        [&]() -> asio::awaitable<void> {
            auto first = co_await holder.async_acquire("f", fair(0ms), asio::use_awaitable);
            std::vector<int> order;
            int failed = 0;
            auto ex = co_await asio::this_coro::executor;
            for (int i = 0; i < waiters; ++i) {
                auto& client = i % 2 == 0 ? even : odd;
                asio::co_spawn(
                    ex,
                    [&, i]() -> asio::awaitable<void> {
                        auto [ec, l] = co_await client.async_acquire("f", fair(60s), tuple_awaitable);
                        if (ec) {
                            ++failed;
                            co_return;
                        }
                        order.push_back(i);
                        co_await sleep_for(1ms);
                        co_await l.async_release(asio::use_awaitable);
                    },
                    asio::detached);
                BOOST_TEST_REQUIRE(
                    co_await eventually([&] { return queued_everywhere(servers, "f", i + 1); }));
            }
            const auto attempts_before = even.metrics().attempts + odd.metrics().attempts;
            co_await first.async_release(asio::use_awaitable);
            BOOST_TEST(co_await eventually([&] { return order.size() + failed == waiters; }, 30s));
            BOOST_TEST(failed == 0);
            std::vector<int> expected(waiters);
            std::iota(expected.begin(), expected.end(), 0);
            BOOST_TEST(order == expected, boost::test_tools::per_element());

            const auto wakeups = even.metrics().release_wakeups + odd.metrics().release_wakeups;
            const auto attempts = even.metrics().attempts + odd.metrics().attempts - attempts_before;
            BOOST_TEST_MESSAGE("N=" << n << ": " << wakeups << " wake-ups, " << attempts << " attempts for "
                                    << waiters << " hand-offs");
            // Each release wakes the next waiter only: about one wake-up and one attempt per
            // hand-off, where a herd would cost about waiters^2 / 2. On a loaded machine more
            // wake-ups than hand-offs: a message that arrives while the waiter is already
            // trying (its refresh timer fired first) still counts, a round that failed on a
            // split requeues and wakes the head again, and each of the N nodes sends the head its
            // hand-off, which can count more than once (pinned to one core, N = 5 counted 115
            // for 50 hand-offs, with no extra attempt). So at most N + 1 per hand-off.
            BOOST_TEST(wakeups <= static_cast<std::uint64_t>((n + 1) * waiters));
            BOOST_TEST(wakeups >= static_cast<std::uint64_t>(waiters * 3 / 4));
            BOOST_TEST(attempts <= static_cast<std::uint64_t>(2 * waiters));
            BOOST_TEST(co_await eventually([&] { return nothing_left(servers, "f"); }));
        }(),
        60s);
}

// A release hands the lock over to the head of the queue in its own script and tells it so: the
// head holds the lock without a request of its own. The waiter reaches the servers through
// proxies that hold every request back 1 s once it is queued, so a hand-off that took a round of
// the waiter's would take that long (the test allows half of it). Its place is kept 6 s, less
// than the 10 s ttl: the handed-over lock expires with the place, and the new holder extends it
// to the ttl at once.
//
// The head must be asleep at the release, with no round on its way (a round held back took the
// lock with the full ttl on loaded CI runs): its subscription confirmed while its first round
// was still held back (a confirmation after that round starts one more), its rounds decided
// (the metrics count each as it is), and its next refresh 2 s away (a third of its place's 6 s).
BOOST_DATA_TEST_CASE(a_release_hands_the_lock_over_to_the_head_without_a_round_trip, node_counts, n) {
    auto servers = start_redis_servers(static_cast<std::size_t>(n));
    auto proxied = redlock::test::through_proxies(servers);
    auto& proxies = proxied.proxies;
    asio::io_context ioc;
    redlock::client holder(ioc.get_executor(), lock_config(servers));
    redlock::client waiter(ioc.get_executor(), proxied.config);
    constexpr auto held_back = 1000ms;
    constexpr auto queue_timeout = 6s;
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto first = co_await holder.async_acquire("h", fair(0ms), asio::use_awaitable);
        BOOST_TEST_REQUIRE(co_await eventually([&] { return held_everywhere(servers, "h", first); }));
        // The waiter's command connections are up; its subscriber connections open at its wait,
        // and are not held back.
        BOOST_TEST_REQUIRE(
            co_await eventually([&] { return redlock::test::accepted_everywhere(proxies, 1); }));
        for (auto& p : proxies)
            p->hold_requests();
        std::optional<error_code> result;
        clock_type::time_point got_at;
        clock_type::time_point valid_until_at_grant;
        std::int64_t pttl_at_grant = 0;
        redlock::lease lease;
        const auto pttl = [&] { return servers.front()->command({"PTTL", key_tag("h") + ":lock"}).integer; };
        auto wait = fair(20s, queue_timeout);
        wait.node_timeout = 2s;  // a request held back is not a node that failed
        const auto wait_began = clock_type::now();
        redlock::diagnostics diag;
        waiter.async_acquire("h", wait, diag, [&](error_code ec, redlock::lease l) {
            result = ec;
            got_at = clock_type::now();
            // Before the extend to the full ttl, held back by the proxies.
            valid_until_at_grant = l.valid_until();
            pttl_at_grant = pttl();
            lease = std::move(l);
        });
        // Only the waiter subscribes (the holder does not wait).
        BOOST_TEST_REQUIRE(co_await eventually([&] {
            return std::all_of(servers.begin(), servers.end(), [](const auto& s) {
                return s->command({"PUBSUB", "SHARDCHANNELS"}).elements.size() == 1;
            });
        }));
        co_await sleep_for(50ms);  // the confirmations reach the waiter
        for (auto& p : proxies)
            p->deliver_held();
        BOOST_TEST_REQUIRE(co_await eventually([&] { return queued_everywhere(servers, "h", 1); }));
        // Every round it began is decided (each was denied: the lock is held), so it sleeps.
        BOOST_TEST_REQUIRE(co_await eventually([&] {
            const auto m = waiter.metrics();
            return m.attempts >= 1 && m.contended == m.attempts;
        }));
        co_await sleep_for(50ms);  // the stragglers' replies reach the waiter
        for (auto& p : proxies)
            p->set_request_delay(held_back);
        const auto before = waiter.metrics();
        BOOST_TEST_MESSAGE("N=" << n << ": " << before.attempts << " rounds before the release, "
                                << before.contended << " of them ended");
        const auto released_at = clock_type::now();
        co_await first.async_release(asio::use_awaitable);
        BOOST_TEST_REQUIRE(co_await eventually([&] { return result.has_value(); }, 5s));
        BOOST_TEST_REQUIRE(!*result);
        const auto took = got_at - released_at;
        BOOST_TEST_MESSAGE("N=" << n << ": the head held the lock "
                                << std::chrono::duration_cast<std::chrono::microseconds>(took).count()
                                << " us after the release began");
        BOOST_TEST((took < held_back / 2));
        BOOST_TEST(waiter.metrics().attempts == before.attempts);
        BOOST_TEST(lease.held());
        BOOST_TEST(lease.nodes_granted() >= static_cast<unsigned>(n / 2 + 1));
        // The diagnostics say so, and name the nodes that handed it over as the ones that granted.
        BOOST_TEST(diag.message.find("handed over by the release") != std::string::npos, diag.message);
        BOOST_TEST(granted_in(diag) == lease.nodes_granted());
        // Its validity is counted from its last round, which began after the wait did, and ends
        // with its place's deadline (less the drift allowance, 1 % + 2 ms).
        BOOST_TEST((valid_until_at_grant - got_at <= queue_timeout));
        BOOST_TEST((valid_until_at_grant >=
                    wait_began + queue_timeout - std::chrono::milliseconds(queue_timeout) / 100 - 2ms));
        BOOST_TEST(pttl_at_grant <= std::chrono::milliseconds(queue_timeout).count());
        // The extend to the full ttl goes through the proxy too.
        BOOST_TEST(co_await eventually([&] { return pttl() > 8000; }, 3s));
        BOOST_TEST(co_await eventually([&] { return lease.valid_until() - clock_type::now() > 8s; }, 3s));
        // It is the lease's lock: another client is refused, and the lease's release frees it.
        auto [stranger_ec, stranger] = co_await holder.async_acquire("h", fair(0ms), tuple_awaitable);
        BOOST_TEST((stranger_ec == redlock::error::not_acquired));
        for (auto& p : proxies)
            p->set_request_delay(0ms);
        co_await lease.async_release(asio::use_awaitable);
        BOOST_TEST(co_await eventually([&] { return nothing_left(servers, "h"); }));
    }());
}

// A waiter subscribes to its channel on one connection and queues on another: its round may
// run before its SUBSCRIBE, and a release in between is not heard. Here the subscriber
// connections are 300 ms slower than the others (the SUBSCRIBE takes effect after about 900 ms)
// and the holder releases at once, handing the lock over unheard; the head tries once more when
// its subscription is in place on every node. Without that it slept until its refresh (10 s).
BOOST_DATA_TEST_CASE(a_hand_off_before_the_heads_subscription_took_effect_is_taken_once_it_did, node_counts,
                     n) {
    auto servers = start_redis_servers(static_cast<std::size_t>(n));
    auto proxied = redlock::test::through_proxies(servers);
    auto& proxies = proxied.proxies;
    asio::io_context ioc;
    redlock::client holder(ioc.get_executor(), lock_config(servers));
    redlock::client waiter(ioc.get_executor(), proxied.config);
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto first = co_await holder.async_acquire("s", fair(0ms), asio::use_awaitable);
        BOOST_TEST_REQUIRE(co_await eventually([&] { return held_everywhere(servers, "s", first); }));
        // The waiter's command connections are up; its subscriber connections open at its wait.
        BOOST_TEST_REQUIRE(
            co_await eventually([&] { return redlock::test::accepted_everywhere(proxies, 1); }));
        for (auto& p : proxies)
            p->set_request_delay_of_new_connections(300ms);
        background_acquire head;
        head.start(waiter, "s", fair(20s));
        BOOST_TEST_REQUIRE(co_await eventually([&] { return queued_everywhere(servers, "s", 1); }));
        const auto released = clock_type::now();
        co_await first.async_release(asio::use_awaitable);
        co_await expect_the_head_holds_it(
            servers, "s", head, released, 3s,
            "N=" + std::to_string(n) + ": the head took its unheard hand-off over");
    }());
}

// A hand-off nobody hears (here: the head polls, with no subscription) is the head's lock all
// the same: the head's next round takes it over, long before the handed-over lock would expire
// with the head's place (5 s). Another newcomer is refused meanwhile.
BOOST_DATA_TEST_CASE(a_hand_off_nobody_heard_is_taken_by_the_heads_next_round, node_counts, n) {
    auto servers = start_redis_servers(static_cast<std::size_t>(n));
    asio::io_context ioc;
    redlock::client holder(ioc.get_executor(), lock_config(servers));
    redlock::client client(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto first = co_await holder.async_acquire("u", fair(0ms), asio::use_awaitable);
        BOOST_TEST_REQUIRE(co_await eventually([&] { return held_everywhere(servers, "u", first); }));
        const auto polling = polling_fair(300ms);
        background_acquire head;
        head.start(client, "u", polling);
        BOOST_TEST_REQUIRE(co_await eventually([&] { return queued_everywhere(servers, "u", 1); }));
        const auto released = clock_type::now();
        co_await first.async_release(asio::use_awaitable);
        // Handed over: the lock is held, and the queue is empty.
        for (const auto& s : servers) {
            BOOST_TEST(s->command({"EXISTS", key_tag("u") + ":lock"}).integer == 1);
            BOOST_TEST(queued(*s, "u") == 0);
        }
        auto [newcomer_ec, newcomer] = co_await holder.async_acquire("u", fair(0ms), tuple_awaitable);
        BOOST_TEST((newcomer_ec == redlock::error::not_acquired));
        co_await expect_the_head_holds_it(
            servers, "u", head, released, 2s,
            "N=" + std::to_string(n) + ": the polling head took its hand-off over");
    }());
}

// A head cancelled after a release handed it the lock, before it heard of it (it polls), frees
// the lock as it leaves: the next newcomer gets it at once.
BOOST_DATA_TEST_CASE(a_head_cancelled_before_it_heard_of_its_hand_off_frees_the_lock, node_counts, n) {
    auto servers = start_redis_servers(static_cast<std::size_t>(n));
    asio::io_context ioc;
    redlock::client holder(ioc.get_executor(), lock_config(servers));
    redlock::client client(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto first = co_await holder.async_acquire("c", fair(0ms), asio::use_awaitable);
        BOOST_TEST_REQUIRE(co_await eventually([&] { return held_everywhere(servers, "c", first); }));
        const auto polling = polling_fair(10s);
        std::optional<error_code> result;
        asio::cancellation_signal cancel;
        client.async_acquire(
            "c", polling,
            asio::bind_cancellation_slot(cancel.slot(), [&](error_code ec, redlock::lease) { result = ec; }));
        BOOST_TEST_REQUIRE(co_await eventually([&] { return queued_everywhere(servers, "c", 1); }));
        co_await first.async_release(asio::use_awaitable);
        for (const auto& s : servers)
            BOOST_TEST(s->command({"EXISTS", key_tag("c") + ":lock"}).integer == 1);
        cancel.emit(asio::cancellation_type::terminal);
        BOOST_TEST_REQUIRE(co_await eventually([&] { return result.has_value(); }));
        BOOST_TEST((*result == asio::error::operation_aborted));
        // At once: not when the handed-over lock expires with the head's place, 5 s later.
        BOOST_TEST(co_await eventually([&] { return nothing_left(servers, "c"); }, 3s));
        auto [newcomer_ec, newcomer] = co_await holder.async_acquire("c", fair(0ms), tuple_awaitable);
        BOOST_TEST(!newcomer_ec);
        if (!newcomer_ec) co_await newcomer.async_release(asio::use_awaitable);
    }());
}

// A fenced fair lock numbers its holders in queue order.
BOOST_DATA_TEST_CASE(fenced_fair_grants_are_numbered_in_queue_order, node_counts, n) {
    auto servers = start_redis_servers(static_cast<std::size_t>(n));
    asio::io_context ioc;
    redlock::client holder(ioc.get_executor(), lock_config(servers));
    redlock::client waiting(ioc.get_executor(), lock_config(servers));
    constexpr int waiters = 10;
    auto fenced_fair = [](std::chrono::milliseconds wait) {
        auto o = fair(wait);
        o.fenced = true;
        return o;
    };
    run_coro(
        ioc,
        [&]() -> asio::awaitable<void> {
            auto first = co_await holder.async_acquire("ff", fenced_fair(0ms), asio::use_awaitable);
            BOOST_TEST(first.fence() > 0u);
            std::vector<int> order;
            std::vector<std::uint64_t> fences;
            int failed = 0;
            auto ex = co_await asio::this_coro::executor;
            for (int i = 0; i < waiters; ++i) {
                asio::co_spawn(
                    ex,
                    [&, i]() -> asio::awaitable<void> {
                        auto [ec, l] =
                            co_await waiting.async_acquire("ff", fenced_fair(30s), tuple_awaitable);
                        if (ec) {
                            ++failed;
                            co_return;
                        }
                        order.push_back(i);
                        fences.push_back(l.fence());
                        co_await l.async_release(asio::use_awaitable);
                    },
                    asio::detached);
                BOOST_TEST_REQUIRE(
                    co_await eventually([&] { return queued_everywhere(servers, "ff", i + 1); }));
            }
            co_await first.async_release(asio::use_awaitable);
            BOOST_TEST(co_await eventually([&] { return order.size() + failed == waiters; }, 20s));
            BOOST_TEST(failed == 0);
            std::vector<int> expected(waiters);
            std::iota(expected.begin(), expected.end(), 0);
            BOOST_TEST(order == expected, boost::test_tools::per_element());
            std::uint64_t last = first.fence();
            for (auto f : fences) {
                BOOST_TEST(f > last);
                last = f;
            }
            BOOST_TEST(co_await eventually([&] { return nothing_left(servers, "ff"); }));
        }(),
        40s);
}

// While anybody queues, a free lock goes to the head only, even without a release message (the
// holder's key vanished as if it expired): the head finds it when it refreshes its place.
BOOST_DATA_TEST_CASE(a_free_lock_goes_to_the_head_of_the_queue_only, node_counts, n) {
    auto servers = start_redis_servers(static_cast<std::size_t>(n));
    asio::io_context ioc;
    redlock::client holder(ioc.get_executor(), lock_config(servers));
    redlock::client client(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto first = co_await holder.async_acquire("h", fair(0ms), asio::use_awaitable);
        std::optional<redlock::lease> head;
        std::optional<error_code> head_result;
        client.async_acquire("h", fair(20s, 1500ms), [&](error_code ec, redlock::lease l) {
            head_result = ec;
            head.emplace(std::move(l));
        });
        BOOST_TEST_REQUIRE(co_await eventually([&] { return queued_everywhere(servers, "h", 1); }));
        for (const auto& s : servers)
            s->command({"DEL", key_tag("h") + ":lock"});
        const auto freed = clock_type::now();

        // A newcomer may not take it.
        auto [once_ec, once] = co_await client.async_acquire("h", fair(0ms), tuple_awaitable);
        BOOST_TEST((once_ec == redlock::error::not_acquired));
        co_await sleep_for(100ms);
        auto [again_ec, again] = co_await client.async_acquire("h", fair(0ms), tuple_awaitable);
        BOOST_TEST((again_ec == redlock::error::not_acquired));

        // The head refreshes every queue_timeout / 3 = 500 ms, and takes it then.
        BOOST_TEST(co_await eventually([&] { return head_result.has_value(); }, 3s));
        BOOST_TEST(!*head_result);
        BOOST_TEST_MESSAGE(
            "N=" << n << ": the head took the free lock after "
                 << std::chrono::duration_cast<std::chrono::milliseconds>(clock_type::now() - freed).count()
                 << " ms");
        BOOST_TEST(head->held());
        // A fair lease is a plain lease once held: extend and release work on it.
        auto [ext_ec] = co_await head->async_extend(20s, tuple_awaitable);
        BOOST_TEST(!ext_ec);
        for (const auto& s : servers)
            BOOST_TEST(s->command({"PTTL", key_tag("h") + ":lock"}).integer > 10000);
        auto [rel_ec] = co_await head->async_release(tuple_awaitable);
        BOOST_TEST(!rel_ec);
        auto [stale_ec] = co_await first.async_release(tuple_awaitable);
        BOOST_TEST((stale_ec == redlock::error::not_owner));
        BOOST_TEST(co_await eventually([&] { return nothing_left(servers, "h"); }));
    }());
}

// A waiter process killed while queued keeps its place until its deadline on the server's clock
// (queue_timeout after its last refresh), then is evicted: the waiter behind it gets the lock.
BOOST_DATA_TEST_CASE(a_killed_waiter_is_evicted_after_its_queue_timeout, node_counts, n) {
    auto servers = start_redis_servers(static_cast<std::size_t>(n));
    const auto uris = redlock::test::node_uris(servers);
    asio::io_context ioc;
    redlock::client holder(ioc.get_executor(), lock_config(servers));
    redlock::client client(ioc.get_executor(), lock_config(servers));
    constexpr auto queue_timeout = 1000ms;
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto first = co_await holder.async_acquire("k", fair(0ms), asio::use_awaitable);
        const pid_t doomed = redlock::test::spawn_child(
            REDLOCK_CONTENDER_PATH,
            {"--nodes", uris, "--checker", servers.front()->uri(), "--resource", "k", "--coroutines", "1",
             "--rounds", "1", "--fair", "1", "--queue-timeout-ms", std::to_string(queue_timeout.count())});
        BOOST_TEST_REQUIRE(co_await eventually([&] { return queued_everywhere(servers, "k", 1); }));
        background_acquire behind;
        behind.start(client, "k", fair(20s, queue_timeout));
        BOOST_TEST_REQUIRE(co_await eventually([&] { return queued_everywhere(servers, "k", 2); }));

        kill(doomed, SIGKILL);
        BOOST_TEST(redlock::test::wait_child(doomed, 10s) == redlock::test::killed_by(SIGKILL));
        const auto killed = clock_type::now();
        // Each server's deadline of the dead waiter's place (its clock, ms), final now.
        std::vector<std::int64_t> dead_until;
        for (const auto& s : servers) {
            const auto head = s->command({"ZRANGE", key_tag("k") + ":queue", "0", "0"});
            BOOST_TEST_REQUIRE(head.elements.size() == 1u);
            const auto until =
                s->command({"ZSCORE", key_tag("k") + ":queue:deadlines", head.elements[0].str});
            dead_until.push_back(std::stoll(until.str));
        }
        // Hands the lock over to the dead head, until the deadline of its place: nobody hears it.
        co_await first.async_release(asio::use_awaitable);

        BOOST_TEST(co_await eventually([&] { return behind.result.has_value(); }, 5s));
        const auto waited = clock_type::now() - killed;
        BOOST_TEST_MESSAGE("N=" << n << ": the waiter behind the killed one got the lock "
                                << std::chrono::duration_cast<std::chrono::milliseconds>(waited).count()
                                << " ms after the kill");
        BOOST_TEST(!*behind.result);
        // FIFO held while the dead waiter's place was still valid (its last refresh was due at
        // most queue_timeout / 3 before the kill; a child process on a loaded machine refreshes
        // late, so its place may end sooner), and it held up the queue no longer than its
        // deadline plus one refresh of the waiter behind it, with slack for a loaded machine.
        BOOST_TEST((waited >= queue_timeout / 3));
        BOOST_TEST((waited <= queue_timeout + queue_timeout / 3 + 1500ms));
        // On the servers' own clocks: the grant (its key's expiry less its ttl of 10 s) came no
        // earlier than the dead waiter's deadline, on every server that granted.
        std::size_t granted = 0;
        for (std::size_t i = 0; i < servers.size(); ++i) {
            const auto expires_at = servers[i]->command({"PEXPIRETIME", lock_key("k")}).integer;
            if (expires_at <= 0) continue;
            ++granted;
            BOOST_TEST(expires_at - 10000 >= dead_until[i], "server " << i << ": granted "
                                                                      << dead_until[i] - (expires_at - 10000)
                                                                      << " ms before the deadline");
        }
        BOOST_TEST(granted >= servers.size() / 2 + 1);
        co_await behind.lease->async_release(asio::use_awaitable);
        BOOST_TEST(co_await eventually([&] { return nothing_left(servers, "k"); }));
    }());
}

// A waiter that times out or is cancelled leaves the queue and its subscription on every
// server; if it was the head, the waiter behind it moves up at once.
BOOST_DATA_TEST_CASE(timeout_and_cancellation_leave_no_queue_entry_behind, node_counts, n) {
    auto servers = start_redis_servers(static_cast<std::size_t>(n));
    asio::io_context ioc;
    redlock::client holder(ioc.get_executor(), lock_config(servers));
    redlock::client client(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto first = co_await holder.async_acquire("t", fair(0ms), asio::use_awaitable);
        auto [timeout_ec, none] = co_await client.async_acquire("t", fair(300ms), tuple_awaitable);
        BOOST_TEST((timeout_ec == redlock::error::wait_timeout));
        BOOST_TEST(co_await eventually([&] { return queued_everywhere(servers, "t", 0); }));
        BOOST_TEST(co_await eventually([&] {
            for (const auto& s : servers)
                if (!s->command({"PUBSUB", "SHARDCHANNELS", key_tag("t") + ":wake:*"}).elements.empty())
                    return false;
            return true;
        }));

        asio::cancellation_signal cancel;
        std::optional<error_code> cancelled;
        client.async_acquire("t", fair(30s),
                             asio::bind_cancellation_slot(
                                 cancel.slot(), [&](error_code e, redlock::lease) { cancelled = e; }));
        BOOST_TEST_REQUIRE(co_await eventually([&] { return queued_everywhere(servers, "t", 1); }));
        background_acquire behind;
        behind.start(client, "t", fair(30s));
        BOOST_TEST_REQUIRE(co_await eventually([&] { return queued_everywhere(servers, "t", 2); }));
        cancel.emit(asio::cancellation_type::terminal);
        BOOST_TEST(co_await eventually([&] { return cancelled.has_value(); }));
        BOOST_TEST((cancelled == error_code(asio::error::operation_aborted)));
        BOOST_TEST(co_await eventually([&] { return queued_everywhere(servers, "t", 1); }));

        // The cancelled head is gone: the release wakes the one behind it, long before its
        // refresh (queue_timeout / 3 = 10 s), which is all a waiter that hears a message waits for.
        const auto released = clock_type::now();
        co_await first.async_release(asio::use_awaitable);
        BOOST_TEST(co_await eventually([&] { return behind.result.has_value(); }, 5s));
        BOOST_TEST(!*behind.result);
        BOOST_TEST((clock_type::now() - released < 5s));
        co_await behind.lease->async_release(asio::use_awaitable);
        BOOST_TEST(co_await eventually([&] { return nothing_left(servers, "t"); }));
    }());
}

// 10 coroutines of two clients each take the lock 20 times, queueing again right after each
// release. A round that fails on a split of the nodes (a newcomer took a free node before the
// head got there) frees what it took and wakes the head: no waiter ever waits for its refresh.
BOOST_DATA_TEST_CASE(a_busy_fair_lock_moves_by_wake_ups_alone, node_counts, n) {
    auto servers = start_redis_servers(static_cast<std::size_t>(n));
    asio::io_context ioc;
    redlock::client a(ioc.get_executor(), lock_config(servers));
    redlock::client b(ioc.get_executor(), lock_config(servers));
    constexpr int coroutines = 10, rounds = 20;
    constexpr auto queue_timeout = 30s;  // a refresh every 10 s: far beyond this test
    run_coro(
        ioc,
        [&]() -> asio::awaitable<void> {
            int holds = 0, failed = 0, finished = 0, inside = 0, max_inside = 0, diag_disagrees = 0;
            auto ex = co_await asio::this_coro::executor;
            for (int c = 0; c < coroutines; ++c) {
                auto& client = c % 2 == 0 ? a : b;
                asio::co_spawn(
                    ex,
                    [&]() -> asio::awaitable<void> {
                        for (int r = 0; r < rounds; ++r) {
                            redlock::diagnostics diag;
                            auto [ec, l] = co_await client.async_acquire("busy", fair(20s, queue_timeout),
                                                                         diag, tuple_awaitable);
                            if (ec) {
                                ++failed;
                                continue;
                            }
                            // Whether a round or hand-offs granted it, the diagnostics name the
                            // nodes the lease counts, a quorum.
                            const auto granted_by = granted_in(diag);
                            diag_disagrees += granted_by != l.nodes_granted() ||
                                                      granted_by < static_cast<std::size_t>(n / 2 + 1)
                                                  ? 1
                                                  : 0;
                            // Inside across a suspension: another holder would be seen here.
                            max_inside = std::max(max_inside, ++inside);
                            co_await sleep_for(1ms);
                            max_inside = std::max(max_inside, inside);
                            --inside;
                            co_await l.async_release(asio::use_awaitable);
                            ++holds;
                        }
                        ++finished;
                    },
                    asio::detached);
            }
            BOOST_TEST(co_await eventually([&] { return finished == coroutines; }, 20s));
            BOOST_TEST(holds == coroutines * rounds);
            BOOST_TEST(failed == 0);
            BOOST_TEST(max_inside == 1);
            BOOST_TEST(diag_disagrees == 0);
            const auto longest =
                std::max(a.metrics().acquire_latency.max_us, b.metrics().acquire_latency.max_us);
            BOOST_TEST_MESSAGE("N=" << n << ": " << holds << " holds; the longest acquire took " << longest
                                    << " us");
            BOOST_TEST(longest < 5'000'000u);  // half the refresh interval
            BOOST_TEST(co_await eventually([&] { return nothing_left(servers, "busy"); }));
        }(),
        60s);
}

BOOST_AUTO_TEST_CASE(a_fair_lock_is_not_reentrant_and_needs_a_queue_timeout) {
    auto servers = start_redis_servers(1);
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto reentrant = fair(1s);
        reentrant.reentrant = true;
        reentrant.owner = redlock::owner_id("me");
        redlock::diagnostics diag;
        auto [ec1, l1] = co_await client.async_acquire("v", reentrant, diag, tuple_awaitable);
        BOOST_TEST((ec1 == redlock::error::invalid_config));
        BOOST_TEST(diag.message.find("fair") != std::string::npos);
        auto no_timeout = fair(1s, 0ms);
        auto [ec2, l2] = co_await client.async_acquire("v", no_timeout, tuple_awaitable);
        BOOST_TEST((ec2 == redlock::error::invalid_config));
        BOOST_TEST(nothing_left(servers, "v"));
    }());
}

BOOST_AUTO_TEST_SUITE_END()
