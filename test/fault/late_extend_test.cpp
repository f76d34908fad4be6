// SPDX-License-Identifier: BSL-1.0
// An extend with a short ttl that a server runs late, after a later extend with a long ttl: the
// client wrote it on a connection that then went silent and was given up (health check), and its
// bytes reach the server whenever the network lets them. The holder counts its validity from the
// long extend; the late short one must not cut the hold below it, for any kind of lock.
#include "support/lock_helpers.hpp"
#include "support/printing.hpp"
#include "support/redis_server.hpp"
#include "support/run_coro.hpp"
#include "support/tcp_proxy.hpp"
#include <redlock/redlock.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <string>
#include <tuple>
#include <vector>

namespace asio = boost::asio;
using namespace std::chrono_literals;
using boost::system::error_code;
using redlock::test::eventually;
using redlock::test::lock_config;
using redlock::test::run_coro;
using redlock::test::sleep_for;
using redlock::test::start_redis_servers;
using redlock::test::tcp_proxy;
using redlock::test::through;

namespace {

constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);
const std::vector<std::string> resources = {"late-a", "late-b"};

// One resource, or (`several`) both at once with async_acquire_all.
asio::awaitable<std::tuple<error_code, redlock::lease>> acquire(redlock::client& client,
                                                                redlock::lock_options o, bool several) {
    if (several) co_return co_await client.async_acquire_all(resources, o, tuple_awaitable);
    co_return co_await client.async_acquire(resources[0], o, tuple_awaitable);
}

// The holder extends with 300 ms on a connection whose requests the proxy holds back, gives the
// silent connection up, extends with 10 s on a new one, and then the held bytes reach the
// server. A rival (`rival_kind`) is still refused a second later, and the holder still counts
// its lease valid. `several`: the holder takes both resources at once (async_acquire_all).
void a_late_short_extend_does_not_cut_the_hold(redlock::lock_options kind, redlock::lock_options rival_kind,
                                               bool several = false) {
    auto servers = start_redis_servers(1);
    tcp_proxy proxy(servers[0]->port());
    asio::io_context ioc;
    auto cfg = through(proxy);
    cfg.health_check_interval = 100ms;  // given up after 200 ms of silence
    redlock::client holder(ioc.get_executor(), cfg);
    redlock::client rival(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto o = kind;
        o.ttl = 5s;
        o.wait = 0ms;
        o.watchdog = false;
        o.node_timeout = 100ms;
        auto held = co_await acquire(holder, o, several);
        auto& [acquired, lease] = held;
        BOOST_TEST_REQUIRE(!acquired, acquired.message());
        const auto accepted_before = proxy.accepted();
        proxy.hold_requests();
        auto [short_failed] = co_await lease.async_extend(300ms, tuple_awaitable);
        BOOST_TEST_REQUIRE(!!short_failed);
        // The short extend's bytes wait on the connection the client gives up; a new one serves.
        BOOST_TEST_REQUIRE(co_await eventually([&] { return proxy.abandoned_connections() == 1u; }));
        BOOST_TEST_REQUIRE(co_await eventually([&] { return proxy.accepted() > accepted_before; }));
        redlock::diagnostics diag;
        error_code long_failed;
        for (int i = 0; i < 20; ++i) {  // the first may meet the new connection's handshake
            auto [ec] = co_await lease.async_extend(10s, diag, tuple_awaitable);
            long_failed = ec;
            if (!ec) break;
            co_await sleep_for(50ms);
        }
        BOOST_TEST_REQUIRE(!long_failed, long_failed.message() << ": " << diag.message);
        const auto valid_until = lease.valid_until();
        proxy.deliver_held();
        BOOST_TEST_REQUIRE(co_await eventually([&] { return proxy.abandoned_connections() == 0u; }));
        // Past the short ttl: the hold is what the long extend made it.
        co_await sleep_for(1s);
        auto r = rival_kind;
        r.ttl = 5s;
        r.wait = 0ms;
        auto taken = co_await acquire(rival, r, several);
        auto& [stolen_ec, stolen] = taken;
        BOOST_TEST((stolen_ec == redlock::error::not_acquired), stolen_ec.message());
        BOOST_TEST((std::chrono::steady_clock::now() < valid_until));
        BOOST_TEST(lease.held());
        if (!stolen_ec) co_await stolen.async_release(tuple_awaitable);
        auto [released] = co_await lease.async_release(tuple_awaitable);
        BOOST_TEST(!released, released.message());
    }());
}

redlock::lock_options plain_lock() {
    return {};
}

redlock::lock_options with(void (*set)(redlock::lock_options&)) {
    redlock::lock_options o;
    set(o);
    return o;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(late_extend_suite)

BOOST_AUTO_TEST_CASE(plain) {
    a_late_short_extend_does_not_cut_the_hold(plain_lock(), plain_lock());
}

BOOST_AUTO_TEST_CASE(fenced) {
    const auto fenced = with([](redlock::lock_options& o) { o.fenced = true; });
    a_late_short_extend_does_not_cut_the_hold(fenced, fenced);
}

BOOST_AUTO_TEST_CASE(fair) {
    const auto fair = with([](redlock::lock_options& o) { o.fair = true; });
    a_late_short_extend_does_not_cut_the_hold(fair, fair);
}

BOOST_AUTO_TEST_CASE(reentrant) {
    auto holder = with([](redlock::lock_options& o) { o.reentrant = true; });
    holder.owner = redlock::owner_id("holder");
    auto rival = with([](redlock::lock_options& o) { o.reentrant = true; });
    rival.owner = redlock::owner_id("rival");
    a_late_short_extend_does_not_cut_the_hold(holder, rival);
}

BOOST_AUTO_TEST_CASE(writer_of_a_read_write_lock) {
    const auto writer = with([](redlock::lock_options& o) { o.mode = redlock::lock_mode::write; });
    a_late_short_extend_does_not_cut_the_hold(writer, writer);
}

BOOST_AUTO_TEST_CASE(reader_against_a_writer) {
    const auto reader = with([](redlock::lock_options& o) { o.mode = redlock::lock_mode::read; });
    const auto writer = with([](redlock::lock_options& o) { o.mode = redlock::lock_mode::write; });
    a_late_short_extend_does_not_cut_the_hold(reader, writer);
}

BOOST_AUTO_TEST_CASE(one_permit_semaphore) {
    const auto permit = with([](redlock::lock_options& o) { o.permits = 1; });
    a_late_short_extend_does_not_cut_the_hold(permit, permit);
}

BOOST_AUTO_TEST_CASE(several_resources) {
    a_late_short_extend_does_not_cut_the_hold(plain_lock(), plain_lock(), true);
}

BOOST_AUTO_TEST_SUITE_END()
