// SPDX-License-Identifier: BSL-1.0
// The pipelined connection against real redis-server processes.
#include "scripts/scripts_gen.hpp"
#include "support/lock_helpers.hpp"
#include "support/redis_server.hpp"
#include "support/run_coro.hpp"
#include "support/slow_lookup.hpp"
#include <redlock/error.hpp>
#include <redlock/redis/connection.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace asio = boost::asio;
namespace resp = redlock::resp;
using namespace std::chrono_literals;
using boost::system::error_code;
using redlock::redis::connection;
using redlock::redis::connection_config;
using redlock::test::redis_server;
using redlock::test::run_coro;
using redlock::test::sleep_for;
using clock_type = std::chrono::steady_clock;

namespace {

constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);

connection_config config_for(const std::string& uri) {
    connection_config cfg;
    std::string why;
    auto ec = redlock::redis::parse_node_uri(uri, cfg.address, why);
    BOOST_TEST_REQUIRE(!ec, why);
    cfg.reconnect_min_delay = 10ms;
    cfg.reconnect_max_delay = 100ms;
    return cfg;
}

// A config whose pushes are written down as "<kind> <channel>".
connection_config recording_pushes(const std::string& uri, std::vector<std::string>& pushes) {
    auto cfg = config_for(uri);
    cfg.on_push = [&pushes](const resp::value& v) {
        pushes.push_back(v.elements.at(0).str + " " + v.elements.at(1).str);
    };
    return cfg;
}

resp::request command(std::initializer_list<std::string_view> args) {
    resp::request r;
    std::vector<std::string_view> rest(args.begin() + 1, args.end());
    r.push_range(*args.begin(), rest);
    return r;
}

// Runs one command and returns its reply; fails the test on a transport error.
// A peer that accepts every connection and never says a word; it keeps what it accepted.
struct silent_peer {
    asio::ip::tcp::acceptor acceptor;
    std::vector<asio::ip::tcp::socket> accepted;

    explicit silent_peer(asio::io_context& ioc) : acceptor(ioc, {asio::ip::make_address("127.0.0.1"), 0}) {
        accept_next();
    }
    void accept_next() {
        acceptor.async_accept([this](error_code ec, asio::ip::tcp::socket s) {
            if (ec) return;
            accepted.push_back(std::move(s));
            accept_next();
        });
    }
    [[nodiscard]] std::string port() const { return std::to_string(acceptor.local_endpoint().port()); }
};

asio::awaitable<resp::value> run_one(connection& conn, resp::request req,
                                     std::chrono::milliseconds timeout = 5000ms) {
    auto [ec, replies] = co_await conn.async_exec(req, timeout, tuple_awaitable);
    BOOST_TEST_REQUIRE(!ec, ec.message());
    BOOST_TEST_REQUIRE(replies.size() == 1u);
    co_return std::move(replies[0]);
}

asio::awaitable<void> expect_connect(connection& conn) {
    auto [ec] = co_await conn.async_connect(tuple_awaitable);
    BOOST_TEST_REQUIRE(!ec, ec.message() << ": " << conn.last_error().message);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(connection_suite)

BOOST_AUTO_TEST_CASE(connects_with_resp3_and_runs_commands) {
    redis_server server;
    asio::io_context ioc;
    connection conn(ioc.get_executor(), config_for(server.uri()));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        co_await expect_connect(conn);
        BOOST_TEST(conn.protocol() == 3);
        BOOST_TEST(conn.is_connected());

        resp::request req;
        req.push("SET", "k", std::string_view("v\r\n\0binary", 10));
        req.push("GET", "k");
        req.push("HGETALL", "nothing");
        req.push("CLIENT", "GETNAME");
        req.push("INCR", "k");  // an error reply is a value, not a failure of the request
        auto [ec, replies] = co_await conn.async_exec(req, tuple_awaitable);
        BOOST_TEST_REQUIRE(!ec);
        BOOST_TEST_REQUIRE(replies.size() == 5u);
        BOOST_TEST(replies[0].str == "OK");
        BOOST_TEST((replies[1].kind == resp::type::bulk_string));
        BOOST_TEST(replies[1].str == std::string("v\r\n\0binary", 10));
        BOOST_TEST((replies[2].kind == resp::type::map));  // RESP3
        BOOST_TEST(replies[3].str == "redlock");
        BOOST_TEST(replies[4].is_error());
        BOOST_TEST(replies[4].error_code() == "ERR");
    }());
}

// A connection that must reach a master (a Sentinel node's) meets READONLY from a master that
// was demoted under it without a word from the sentinels: it asks `locate` again at once and goes
// on with the master named now, instead of meeting READONLY until the sentinels speak.
BOOST_AUTO_TEST_CASE(a_master_demoted_under_the_connection_is_left_at_its_first_readonly) {
    redis_server demoted;
    redis_server promoted;
    bool moved = false;
    int located = 0;
    asio::io_context ioc;
    auto cfg = config_for(demoted.uri());
    cfg.require_master = true;
    cfg.locate = [&](std::chrono::milliseconds, connection_config::locate_handler handler) {
        ++located;
        const auto where = config_for((moved ? promoted : demoted).uri()).address;
        asio::post(ioc, [handler = std::move(handler), where]() mutable {
            std::move(handler)(error_code(), where, "");
        });
    };
    connection conn(ioc.get_executor(), cfg);
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        co_await expect_connect(conn);
        resp::request set;
        set.push("SET", "k", "v");
        auto [ec, replies] = co_await conn.async_exec(set, 2s, tuple_awaitable);
        BOOST_TEST_REQUIRE(!ec);
        BOOST_TEST(replies.at(0).str == "OK");
        moved = true;
        demoted.command({"REPLICAOF", "127.0.0.1", std::to_string(promoted.port())});
        // The first write after the demotion is refused; the ones after it reach the master.
        std::string last;
        for (int i = 0; i < 100 && last != "OK"; ++i) {
            auto [wec, wrote] = co_await conn.async_exec(set, 2s, tuple_awaitable);
            last = wec                      ? wec.message()
                   : wrote.at(0).is_error() ? wrote.at(0).str
                                            : std::string(wrote.at(0).str);
            if (last != "OK") co_await sleep_for(20ms);
        }
        BOOST_TEST(last == "OK");
        BOOST_TEST(located >= 2);
        BOOST_TEST(promoted.command({"GET", "k"}).str == "v");
        conn.close();
    }());
}

BOOST_AUTO_TEST_CASE(ten_thousand_concurrent_requests_get_their_own_replies) {
    redis_server server;
    asio::io_context ioc;
    connection conn(ioc.get_executor(), config_for(server.uri()));
    constexpr int n = 10000;
    int completed = 0, wrong = 0, failed = 0;
    run_coro(ioc, expect_connect(conn));
    auto writes_before = conn.stats().writes;
    for (int i = 0; i < n; ++i) {
        resp::request req;
        req.push("ECHO", "value-" + std::to_string(i));
        conn.async_exec(req, [&, i](error_code ec, std::vector<resp::value> replies) {
            ++completed;
            if (ec || replies.size() != 1) {
                ++failed;
            } else if (replies[0].str != "value-" + std::to_string(i)) {
                ++wrong;
            }
        });
    }
    auto deadline = clock_type::now() + 30s;
    while (completed < n && clock_type::now() < deadline)
        ioc.run_one_for(50ms);
    BOOST_TEST(completed == n);
    BOOST_TEST(failed == 0);
    BOOST_TEST(wrong == 0);
    // Auto-pipelining: requests queued during a write leave together.
    auto writes = conn.stats().writes - writes_before;
    BOOST_TEST_MESSAGE("10000 requests took " << writes << " socket writes");
    BOOST_TEST(writes < static_cast<std::uint64_t>(n / 10));
}

BOOST_AUTO_TEST_CASE(request_timeout_against_a_frozen_server_and_recovery) {
    redis_server server;
    asio::io_context ioc;
    auto cfg = config_for(server.uri());
    cfg.health_check_interval = 0ms;  // this test is about the request timeout alone
    connection conn(ioc.get_executor(), cfg);
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        co_await expect_connect(conn);
        server.pause();
        auto start = clock_type::now();
        auto req1 = command({"ECHO", "stale"});
        auto [ec, replies] = co_await conn.async_exec(req1, 200ms, tuple_awaitable);
        auto took = clock_type::now() - start;
        BOOST_TEST((ec == redlock::error::request_timeout), ec.message());
        BOOST_TEST(replies.empty());
        // Ended by its timeout while the server is still frozen: without one it would wait on.
        BOOST_TEST((took >= 200ms));
        BOOST_TEST((took < 5s));
        server.resume();
        // The stale reply arrives now and must be dropped, not handed to this request.
        auto req2 = command({"ECHO", "fresh"});
        auto fresh = co_await run_one(conn, req2);
        BOOST_TEST(fresh.str == "fresh");
        BOOST_TEST(conn.stats().connects == 1u);
    }());
}

// A request sent while the first connection attempt runs (a client connects at construction
// and acquires at once) gets its timeout after the handshake, not during it; later requests
// have theirs from the moment they are sent.
BOOST_AUTO_TEST_CASE(a_request_sent_during_the_first_connect_has_its_timeout_after_it) {
    redis_server server;
    asio::io_context ioc;
    auto cfg = config_for(server.uri());
    cfg.health_check_interval = 0ms;
    connection conn(ioc.get_executor(), cfg);
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        server.pause();  // the kernel accepts; HELLO waits
        conn.async_connect([](error_code) {});
        co_await redlock::test::resume_after(server, 300ms);
        const auto start = clock_type::now();
        auto first = command({"ECHO", "first"});
        auto [ec, replies] = co_await conn.async_exec(first, 100ms, tuple_awaitable);
        BOOST_TEST(!ec, ec.message());
        BOOST_TEST_REQUIRE(replies.size() == 1u);
        BOOST_TEST(replies[0].str == "first");
        BOOST_TEST((clock_type::now() - start >= 300ms));

        server.pause();
        auto second = command({"ECHO", "later"});
        auto [later, none] = co_await conn.async_exec(second, 100ms, tuple_awaitable);
        server.resume();
        BOOST_TEST((later == redlock::error::request_timeout), later.message());
        BOOST_TEST(none.empty());
        BOOST_TEST(conn.stats().connects == 1u);
    }());
}

BOOST_AUTO_TEST_CASE(cancellation_abandons_the_slot_without_desynchronising) {
    redis_server server;
    asio::io_context ioc;
    auto cfg = config_for(server.uri());
    cfg.health_check_interval = 0ms;
    connection conn(ioc.get_executor(), cfg);
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        co_await expect_connect(conn);
        server.pause();
        asio::cancellation_signal signal;
        asio::steady_timer t(co_await asio::this_coro::executor, 100ms);
        t.async_wait([&](error_code) { signal.emit(asio::cancellation_type::terminal); });
        auto echo = command({"ECHO", "cancelled"});
        auto cancellable = asio::bind_cancellation_slot(signal.slot(), tuple_awaitable);
        auto [ec, replies] = co_await conn.async_exec(echo, cancellable);
        BOOST_TEST((ec == asio::error::operation_aborted), ec.message());
        server.resume();
        auto req3 = command({"ECHO", "after-cancel"});
        auto fresh = co_await run_one(conn, req3);
        BOOST_TEST(fresh.str == "after-cancel");
    }());
}

// Callers on strands of their own, on an io_context of four threads, cancel requests at every
// moment, also while the connection completes them. The completion clears the cancellation
// slot on the caller's executor, where the caller emits, never on the connection's strand:
// `scripts/test --tsan` runs this test to show there is no race. Every request ends once, with
// its reply or operation_aborted, and the connection stays in step.
BOOST_AUTO_TEST_CASE(callers_on_other_strands_cancel_while_their_requests_complete) {
    redis_server server;
    asio::io_context ioc(4);
    auto cfg = config_for(server.uri());
    cfg.health_check_interval = 0ms;
    connection conn(ioc.get_executor(), cfg);
    run_coro(ioc, expect_connect(conn));
    constexpr int callers = 6;
    constexpr int requests = 400;
    std::atomic<int> answered{0}, aborted{0}, other{0}, callers_done{0};
    // Outlive the callers: an emit may come after its caller's last request.
    std::vector<asio::cancellation_signal> signals(callers);
    for (int c = 0; c < callers; ++c) {
        auto strand = asio::make_strand(ioc);
        asio::co_spawn(
            strand,
            [&, strand, c]() -> asio::awaitable<void> {
                auto& signal = signals[static_cast<std::size_t>(c)];
                std::minstd_rand rng(static_cast<unsigned>(c) + 1);
                for (int i = 0; i < requests; ++i) {
                    // On our strand, 0-150 us after the call: before the write, in flight, or
                    // while the reply is being delivered (a round trip here is about that long).
                    // A late one cancels the next request instead.
                    if ((i + c) % 3 != 0) {
                        auto t = std::make_shared<asio::steady_timer>(strand,
                                                                      std::chrono::microseconds(rng() % 150));
                        t->async_wait(
                            [t, &signal](error_code) { signal.emit(asio::cancellation_type::terminal); });
                    }
                    const std::string text = std::to_string(c) + ":" + std::to_string(i);
                    auto echo = command({"ECHO", text});
                    auto [ec, replies] = co_await conn.async_exec(
                        echo, 5s, asio::bind_cancellation_slot(signal.slot(), tuple_awaitable));
                    if (!ec && replies.size() == 1 && replies.front().str == text) {
                        ++answered;
                    } else if (ec == asio::error::operation_aborted) {
                        ++aborted;
                    } else {
                        ++other;
                    }
                }
                ++callers_done;
            },
            asio::detached);
    }
    std::vector<std::thread> threads;
    for (int t = 0; t < 3; ++t)
        threads.emplace_back([&] { ioc.run_for(60s); });
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    while (callers_done < callers && std::chrono::steady_clock::now() < deadline)
        ioc.run_for(10ms);
    BOOST_TEST_MESSAGE(answered << " answered, " << aborted << " cancelled");
    BOOST_TEST(callers_done.load() == callers);
    BOOST_TEST(answered + aborted == callers * requests);
    BOOST_TEST(other.load() == 0);
    BOOST_TEST(answered.load() > 0);
    BOOST_TEST(aborted.load() > 0);
    // The handler runs on whichever thread runs the io_context: its result crosses by a future.
    std::promise<std::string> last;
    auto reply = last.get_future();
    auto echo = command({"ECHO", "in step"});
    conn.async_exec(echo, 5s, [&](error_code ec, std::vector<resp::value> r) {
        last.set_value(ec ? ec.message() : r.at(0).str);
    });
    while (reply.wait_for(0s) != std::future_status::ready && std::chrono::steady_clock::now() < deadline)
        ioc.run_for(10ms);
    BOOST_TEST_REQUIRE((reply.wait_for(0s) == std::future_status::ready), "no reply");
    BOOST_TEST(reply.get() == "in step");
    BOOST_TEST(conn.stats().disconnects == 0u);
    conn.close();
    ioc.stop();
    for (auto& t : threads)
        t.join();
}

BOOST_AUTO_TEST_CASE(reconnects_after_kill_and_restart) {
    redis_server server;
    asio::io_context ioc;
    connection conn(ioc.get_executor(), config_for(server.uri()));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        co_await expect_connect(conn);
        auto req4 = command({"SET", "k", "v"});
        auto before = co_await run_one(conn, req4);
        BOOST_TEST(before.str == "OK");

        // Written but unanswered when the connection drops: may have run, so a distinct error.
        server.pause();
        asio::steady_timer t(co_await asio::this_coro::executor, 100ms);
        t.async_wait([&](error_code) { server.kill9(); });
        auto req5 = command({"SET", "k", "lost?"});
        auto [ec, replies] = co_await conn.async_exec(req5, tuple_awaitable);
        BOOST_TEST((ec == redlock::error::reply_lost), ec.message());

        // Not yet written while the server is down: kept and sent after the reconnect.
        asio::steady_timer restart(co_await asio::this_coro::executor, 300ms);
        restart.async_wait([&](error_code) { server.restart(); });
        auto req6 = command({"GET", "k"});
        auto after = co_await run_one(conn, req6, 10000ms);
        BOOST_TEST(after.is_null());  // no persistence: the restarted server is empty
        BOOST_TEST(conn.stats().connects >= 2u);
        BOOST_TEST(conn.stats().disconnects >= 1u);
        BOOST_TEST(conn.is_connected());
    }());
}

BOOST_AUTO_TEST_CASE(health_check_declares_a_silent_server_dead) {
    redis_server server;
    asio::io_context ioc;
    auto cfg = config_for(server.uri());
    cfg.health_check_interval = 100ms;
    cfg.connect_timeout = 200ms;
    connection conn(ioc.get_executor(), cfg);
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        co_await expect_connect(conn);
        server.pause();
        // Idle: the PING sent after one interval gets no answer; dead after two more.
        co_await sleep_for(600ms);
        BOOST_TEST(conn.stats().disconnects >= 1u);
        BOOST_TEST(!conn.is_connected());
        server.resume();
        co_await sleep_for(50ms);
        auto [ec] = co_await conn.async_connect(tuple_awaitable);
        BOOST_TEST(!ec);
        auto req7 = command({"PING"});
        auto pong = co_await run_one(conn, req7);
        BOOST_TEST(pong.str == "PONG");
    }());
}

BOOST_AUTO_TEST_CASE(connect_timeout_against_a_frozen_server) {
    redis_server server;
    server.pause();
    asio::io_context ioc;
    auto cfg = config_for(server.uri());
    cfg.connect_timeout = 200ms;
    connection conn(ioc.get_executor(), cfg);
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto start = clock_type::now();
        auto [ec] = co_await conn.async_connect(tuple_awaitable);
        BOOST_TEST((ec == redlock::error::connect_timeout), ec.message());
        BOOST_TEST((clock_type::now() - start < 5s));  // while the server is still frozen
        BOOST_TEST(conn.last_error().message.find("timed out") != std::string::npos);
    }());
    server.resume();
}

// A peer that accepts and never says a word: the attempt waits in the TLS handshake (rediss://)
// or for HELLO's reply (redis://). close() ends it at once, not at connect_timeout (30 s here),
// and nothing connects again afterwards.
BOOST_AUTO_TEST_CASE(close_ends_an_attempt_at_every_step) {
    asio::io_context ioc;
    silent_peer silent(ioc);
    auto& accepted = silent.accepted;
    const auto port = silent.port();
    for (const std::string scheme : {"redis", "rediss"}) {
        BOOST_TEST_CONTEXT(scheme) {
            auto cfg = config_for(scheme + "://127.0.0.1:" + port);
            cfg.connect_timeout = 30s;
            connection conn(ioc.get_executor(), cfg);
            run_coro(ioc, [&]() -> asio::awaitable<void> {
                const auto before = accepted.size();
                std::optional<error_code> result;
                conn.async_connect([&](error_code ec) { result = ec; });
                BOOST_TEST_REQUIRE(
                    co_await redlock::test::eventually([&] { return accepted.size() > before; }));
                co_await sleep_for(100ms);  // into the handshake's wait for the peer
                BOOST_TEST(!result.has_value());
                conn.close();
                BOOST_TEST_REQUIRE(
                    co_await redlock::test::eventually([&] { return result.has_value(); }, 5s));
                BOOST_TEST((*result == redlock::error::connection_closed), result->message());
                co_await sleep_for(300ms);
                BOOST_TEST(accepted.size() == before + 1);  // no new attempt
            }());
        }
    }
}

// connect_timeout and close() hold while a name lookup is under way, which Asio 1.81 cannot
// cancel: the attempt ends on time and the lookup's late answer connects nothing. Before, the
// attempt ended only when the lookup did, and then connected to the peer, whose handshake
// waited with no timer at all.
BOOST_AUTO_TEST_CASE(a_lookup_that_ends_after_connect_timeout_or_close_connects_nothing) {
    namespace slow = redlock::test::slow_lookup;
    asio::io_context ioc;
    silent_peer silent(ioc);
    auto& accepted = silent.accepted;
    slow::set_delay(2000ms);
    auto cfg = config_for(std::string("redis://") + slow::host + ":" + silent.port());
    cfg.connect_timeout = 200ms;
    connection conn(ioc.get_executor(), cfg);
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        const auto finished_before = slow::finished();
        auto [ec] = co_await conn.async_connect(tuple_awaitable);
        BOOST_TEST((ec == redlock::error::connect_timeout), ec.message());
        BOOST_TEST(slow::finished() == finished_before);  // at connect_timeout, not at the lookup's end
        BOOST_TEST(conn.last_error().message.find("timed out after 200 ms") != std::string::npos,
                   conn.last_error().message);
        // The timed-out lookup answers now: its attempt is over, and it connects nothing.
        BOOST_TEST_REQUIRE(
            co_await redlock::test::eventually([&] { return slow::finished() > finished_before; }));
        co_await sleep_for(200ms);
        BOOST_TEST(accepted.empty());
        conn.close();
        BOOST_TEST_REQUIRE(
            co_await redlock::test::eventually([&] { return slow::started() == slow::finished(); }));
    }());
    // close() while the lookup is under way: it connects nothing either.
    cfg.connect_timeout = 5s;
    connection closing(ioc.get_executor(), cfg);
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        std::optional<error_code> result;
        closing.async_connect([&](error_code ec) { result = ec; });
        BOOST_TEST_REQUIRE(
            co_await redlock::test::eventually([&] { return slow::started() > slow::finished(); }));
        closing.close();
        BOOST_TEST_REQUIRE(co_await redlock::test::eventually([&] { return result.has_value(); }));
        BOOST_TEST((*result == redlock::error::connection_closed), result->message());
        BOOST_TEST_REQUIRE(
            co_await redlock::test::eventually([&] { return slow::started() == slow::finished(); }));
        co_await sleep_for(200ms);
        BOOST_TEST(accepted.empty());
    }());
    // The same slow name with a connect_timeout that fits the lookup connects: the lookup works.
    redis_server server;
    slow::set_delay(300ms);
    auto patient = config_for(std::string("redis://") + slow::host + ":" + std::to_string(server.port()));
    patient.connect_timeout = 5s;
    connection conn2(ioc.get_executor(), patient);
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        co_await expect_connect(conn2);
        auto ping = command({"PING"});
        BOOST_TEST((co_await run_one(conn2, ping)).str == "PONG");
        conn2.close();
    }());
    slow::set_delay(0ms);
}

BOOST_AUTO_TEST_CASE(noscript_falls_back_to_eval_after_script_flush) {
    redis_server server;
    asio::io_context ioc;
    auto cfg = config_for(server.uri());
    cfg.scripts.assign(redlock::scripts::all.begin(), redlock::scripts::all.end());
    connection conn(ioc.get_executor(), cfg);
    const auto& extend = redlock::scripts::extend;
    // The server computes the SHA we embedded at build time.
    auto loaded = server.command({"SCRIPT", "LOAD", std::string(extend.source)});
    BOOST_TEST(loaded.str == extend.sha1);
    server.command({"SET", "{r}:lock", "token-1"});
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        co_await expect_connect(conn);
        std::vector<std::string_view> keys{"{r}:lock"};
        std::vector<std::string_view> args{"token-1", "30000"};
        auto [ec1, first] = co_await conn.async_eval(extend, keys, args, 1000ms, tuple_awaitable);
        BOOST_TEST_REQUIRE(!ec1);
        BOOST_TEST(first.integer == 1);

        server.command({"SCRIPT", "FLUSH"});
        BOOST_TEST(server.command({"SCRIPT", "EXISTS", std::string(extend.sha1)}).elements.at(0).integer ==
                   0);
        std::vector<std::string_view> other{"token-2", "30000"};
        auto [ec2, second] = co_await conn.async_eval(extend, keys, other, 1000ms, tuple_awaitable);
        BOOST_TEST_REQUIRE(!ec2, ec2.message());
        BOOST_TEST((second.kind == redlock::resp::type::integer));
        BOOST_TEST(second.integer == 0);  // held by token-1: the script ran via EVAL
        // EVAL cached it again: the next call is an EVALSHA hit.
        BOOST_TEST(server.command({"SCRIPT", "EXISTS", std::string(extend.sha1)}).elements.at(0).integer ==
                   1);

        // A Lua runtime error is a value, not a transport failure.
        std::vector<std::string_view> bad_args{"token-1", "not-a-number"};
        auto [ec3, third] = co_await conn.async_eval(extend, keys, bad_args, 1000ms, tuple_awaitable);
        BOOST_TEST(!ec3);
        BOOST_TEST(third.is_error());
    }());
}

BOOST_AUTO_TEST_CASE(scripts_are_loaded_again_on_every_reconnect) {
    redis_server server;
    asio::io_context ioc;
    auto cfg = config_for(server.uri());
    cfg.scripts.assign(redlock::scripts::all.begin(), redlock::scripts::all.end());
    connection conn(ioc.get_executor(), cfg);
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        co_await expect_connect(conn);
        server.kill9();
        server.restart();
        // Until the client notices the restart, the next request may fail; then it reconnects.
        for (int i = 0; i < 50 && conn.stats().connects < 2; ++i) {
            auto req8 = command({"PING"});
            co_await conn.async_exec(req8, 500ms, tuple_awaitable);
        }
        BOOST_TEST_REQUIRE(conn.stats().connects >= 2u);
        for (const auto& s : redlock::scripts::all) {
            BOOST_TEST(server.command({"SCRIPT", "EXISTS", std::string(s.sha1)}).elements.at(0).integer == 1);
        }
    }());
}

BOOST_AUTO_TEST_CASE(auth_with_an_acl_user_and_a_clear_error_for_a_wrong_password) {
    redis_server server;
    auto ok = server.command({"ACL", "SETUSER", "locker", "on", ">s3cret", "~*", "&*", "+@all"});
    BOOST_TEST_REQUIRE(ok.str == "OK");
    asio::io_context ioc;
    auto uri = "redis://locker:s3cret@127.0.0.1:" + std::to_string(server.port());
    connection good(ioc.get_executor(), config_for(uri));
    auto bad_uri = "redis://locker:wrong@127.0.0.1:" + std::to_string(server.port());
    connection bad(ioc.get_executor(), config_for(bad_uri));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        co_await expect_connect(good);
        auto req9 = command({"ACL", "WHOAMI"});
        auto who = co_await run_one(good, req9);
        BOOST_TEST(who.str == "locker");

        auto [ec] = co_await bad.async_connect(tuple_awaitable);
        BOOST_TEST((ec == redlock::error::auth_failed), ec.message());
        auto err = bad.last_error();
        BOOST_TEST(err.message.find("WRONGPASS") != std::string::npos, err.message);
        BOOST_TEST(err.message.find("wrong") == std::string::npos);  // the password never shows
        bad.close();
    }());
}

// One connection carries a SUBSCRIBE the ACL refuses and ordinary requests around it: the
// -NOPERM is the SUBSCRIBE's (its refusal handler gets it, once), and every request gets its own
// reply; the connection stays up. On a connection shared with requests, the error went to the
// oldest request waiting, and each later request got the reply of the one before it.
BOOST_AUTO_TEST_CASE(a_refused_subscribe_on_a_shared_connection_leaves_the_replies_in_step) {
    redis_server server;
    auto ok = server.command({"ACL", "SETUSER", "nosub", "on", ">s", "~*", "&*", "+@all", "-subscribe"});
    BOOST_TEST_REQUIRE(ok.str == "OK");
    asio::io_context ioc;
    connection conn(ioc.get_executor(),
                    config_for("redis://nosub:s@127.0.0.1:" + std::to_string(server.port())));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        co_await expect_connect(conn);
        std::vector<std::string> refusals;
        auto echo_a = command({"ECHO", "a"});
        auto sub = command({"SUBSCRIBE", "c1", "c2"});
        auto echo_b = command({"ECHO", "b"});
        std::optional<resp::value> a;
        conn.async_exec(echo_a, 5000ms, [&](error_code ec, std::vector<resp::value> r) {
            BOOST_TEST(!ec);
            if (!r.empty()) a = r.front();
        });
        conn.send_subscription(sub, "subscribe", 2, [&](const resp::value& v) { refusals.push_back(v.str); });
        auto b = co_await run_one(conn, echo_b);
        BOOST_TEST_REQUIRE(a.has_value());
        BOOST_TEST(a->str == "a");
        BOOST_TEST(b.str == "b");
        BOOST_TEST_REQUIRE(refusals.size() == 1u);
        BOOST_TEST(refusals.front().find("NOPERM") == 0u, refusals.front());
        BOOST_TEST(conn.last_error().message.find("refused a subscription: NOPERM") != std::string::npos,
                   conn.last_error().message);
        auto ping = command({"PING"});
        BOOST_TEST((co_await run_one(conn, ping)).str == "PONG");
        BOOST_TEST(conn.stats().disconnects == 0u);
        BOOST_TEST(conn.stats().connects == 1u);
    }());
}

// The subscriptions' answers are pushes: confirmed ones complete the SUBSCRIBE, the messages go
// to on_push, and requests around them get their own replies.
BOOST_AUTO_TEST_CASE(subscriptions_and_requests_share_a_connection) {
    redis_server server;
    asio::io_context ioc;
    std::vector<std::string> pushes;
    auto cfg = recording_pushes(server.uri(), pushes);
    connection conn(ioc.get_executor(), cfg);
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        co_await expect_connect(conn);
        auto sub = command({"SUBSCRIBE", "c1", "c2"});
        bool refused = false;
        conn.send_subscription(sub, "subscribe", 2, [&](const resp::value&) { refused = true; });
        auto echo = command({"ECHO", "x"});
        BOOST_TEST((co_await run_one(conn, echo)).str == "x");
        server.command({"PUBLISH", "c2", "hello"});
        BOOST_TEST(co_await redlock::test::eventually([&] { return pushes.size() == 3u; }));
        BOOST_TEST((pushes == std::vector<std::string>{"subscribe c1", "subscribe c2", "message c2"}));
        auto unsub = command({"UNSUBSCRIBE", "c1"});
        conn.send_subscription(unsub, "unsubscribe", 1, {});
        BOOST_TEST((co_await run_one(conn, echo)).str == "x");
        BOOST_TEST(pushes.back() == "unsubscribe c1");
        BOOST_TEST(!refused);
        BOOST_TEST(conn.stats().disconnects == 0u);
    }());
}

// RESP2, from a server without HELLO: the pub/sub answers are arrays, not pushes. On a
// subscribed connection they are taken as the pushes they stand for; a PING's "pong" array is
// the PING's reply (Redis lets only pub/sub commands and PING run there on RESP2).
BOOST_AUTO_TEST_CASE(subscriptions_over_resp2_are_matched_as_pushes) {
    redlock::test::redis_server_options options;
    options.extra_args = {"--rename-command", "HELLO", "HELLO-renamed"};
    redis_server server(options);
    asio::io_context ioc;
    std::vector<std::string> pushes;
    auto cfg = recording_pushes(server.uri(), pushes);
    connection conn(ioc.get_executor(), cfg);
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        co_await expect_connect(conn);
        BOOST_TEST_REQUIRE(conn.protocol() == 2);
        auto sub = command({"SUBSCRIBE", "c1", "c2"});
        bool refused = false;
        conn.send_subscription(sub, "subscribe", 2, [&](const resp::value&) { refused = true; });
        auto ping = command({"PING"});
        const auto pong = co_await run_one(conn, ping);
        BOOST_TEST_REQUIRE(pong.elements.size() == 2u, resp::to_string(pong));
        BOOST_TEST(pong.elements[0].str == "pong");
        BOOST_TEST((pushes == std::vector<std::string>{"subscribe c1", "subscribe c2"}));
        server.command({"PUBLISH", "c2", "hello"});
        BOOST_TEST(co_await redlock::test::eventually([&] { return pushes.size() == 3u; }));
        BOOST_TEST(pushes.back() == "message c2");
        auto unsub = command({"UNSUBSCRIBE", "c1"});
        conn.send_subscription(unsub, "unsubscribe", 1, {});
        BOOST_TEST((co_await run_one(conn, ping)).elements.at(0).str == "pong");
        BOOST_TEST(pushes.back() == "unsubscribe c1");
        BOOST_TEST(!refused);
        BOOST_TEST(conn.stats().disconnects == 0u);
        conn.close();
    }());
}

BOOST_AUTO_TEST_CASE(requirepass_with_the_default_user_and_a_missing_password) {
    redlock::test::redis_server_options opts;
    opts.extra_args = {"--requirepass", "pw"};
    redis_server server(opts);
    asio::io_context ioc;
    connection good(ioc.get_executor(), config_for("redis://:pw@127.0.0.1:" + std::to_string(server.port())));
    connection anonymous(ioc.get_executor(),
                         config_for("redis://127.0.0.1:" + std::to_string(server.port())));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        co_await expect_connect(good);
        auto req10 = command({"ACL", "WHOAMI"});
        auto who = co_await run_one(good, req10);
        BOOST_TEST(who.str == "default");
        auto [ec] = co_await anonymous.async_connect(tuple_awaitable);
        BOOST_TEST((ec == redlock::error::auth_failed), ec.message());
        BOOST_TEST(anonymous.last_error().message.find("NOAUTH") != std::string::npos);
        anonymous.close();
    }());
}

BOOST_AUTO_TEST_CASE(selects_the_database_and_reports_a_bad_one) {
    redis_server server;
    asio::io_context ioc;
    connection db2(ioc.get_executor(), config_for(server.uri() + "/2"));
    connection db0(ioc.get_executor(), config_for(server.uri()));
    connection db99(ioc.get_executor(), config_for(server.uri() + "/99"));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        co_await expect_connect(db2);
        co_await expect_connect(db0);
        auto req11 = command({"SET", "where", "two"});
        co_await run_one(db2, req11);
        auto req12 = command({"GET", "where"});
        auto in0 = co_await run_one(db0, req12);
        auto req13 = command({"GET", "where"});
        auto in2 = co_await run_one(db2, req13);
        BOOST_TEST(in0.is_null());
        BOOST_TEST(in2.str == "two");
        auto [ec] = co_await db99.async_connect(tuple_awaitable);
        BOOST_TEST((ec == redlock::error::handshake_failed), ec.message());
        BOOST_TEST(db99.last_error().message.find("SELECT 99") != std::string::npos,
                   db99.last_error().message);
        db99.close();
    }());
}

BOOST_AUTO_TEST_CASE(a_server_below_the_version_floor_is_refused_by_name) {
    redis_server server;
    asio::io_context ioc;
    auto cfg = config_for(server.uri());
    cfg.min_server_version = "99.0";  // every real server is older
    connection too_new_a_floor(ioc.get_executor(), cfg);
    auto lock_client_floor = config_for(server.uri());
    lock_client_floor.min_server_version = "7.0";
    connection fine(ioc.get_executor(), lock_client_floor);
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        co_await expect_connect(fine);
        auto [ec] = co_await too_new_a_floor.async_connect(tuple_awaitable);
        BOOST_TEST((ec == redlock::error::handshake_failed), ec.message());
        const auto message = too_new_a_floor.last_error().message;
        BOOST_TEST(message.find("runs Redis 7.") != std::string::npos, message);
        BOOST_TEST(message.find("older than the 99.0 this client needs") != std::string::npos, message);
        too_new_a_floor.close();
    }());
}

BOOST_AUTO_TEST_CASE(connects_over_a_unix_socket) {
    redis_server server;
    asio::io_context ioc;
    connection conn(ioc.get_executor(), config_for("unix://" + server.unix_socket()));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        co_await expect_connect(conn);
        auto req14 = command({"PING"});
        auto pong = co_await run_one(conn, req14);
        BOOST_TEST(pong.str == "PONG");
    }());
}

BOOST_AUTO_TEST_CASE(close_completes_pending_requests) {
    redis_server server;
    asio::io_context ioc;
    auto cfg = config_for(server.uri());
    cfg.health_check_interval = 0ms;
    connection conn(ioc.get_executor(), cfg);
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        co_await expect_connect(conn);
        server.pause();
        asio::steady_timer t(co_await asio::this_coro::executor, 100ms);
        t.async_wait([&](error_code) { conn.close(); });
        auto req15 = command({"PING"});
        auto [ec, replies] = co_await conn.async_exec(req15, tuple_awaitable);
        BOOST_TEST((ec == redlock::error::connection_closed), ec.message());
        auto req16 = command({"PING"});
        auto [ec2, replies2] = co_await conn.async_exec(req16, tuple_awaitable);
        BOOST_TEST((ec2 == redlock::error::connection_closed), ec2.message());
        server.resume();
    }());
}

// Back-pressure: with the server paused, requests pile up to max_queued_requests; the next one
// fails at once with queue_full, and the queued ones complete once the server answers again.
BOOST_AUTO_TEST_CASE(a_full_request_queue_refuses_more_at_once) {
    redis_server server;
    asio::io_context ioc;
    auto cfg = config_for(server.uri());
    cfg.max_queued_requests = 10;
    cfg.health_check_interval = 0ms;
    connection conn(ioc.get_executor(), cfg);
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        co_await expect_connect(conn);
        server.pause();
        int answered = 0;
        auto ex = co_await asio::this_coro::executor;
        for (int i = 0; i < 10; ++i) {
            asio::co_spawn(
                ex,
                [&]() -> asio::awaitable<void> {
                    auto req = command({"PING"});
                    auto [ec, replies] = co_await conn.async_exec(req, 10s, tuple_awaitable);
                    if (!ec) ++answered;
                },
                asio::detached);
        }
        co_await sleep_for(50ms);
        // Refused, not queued: a queued request would end only after the resume below, or
        // at its timeout, with another error.
        auto req = command({"PING"});
        auto [ec, replies] = co_await conn.async_exec(req, 10s, tuple_awaitable);
        BOOST_TEST((ec == redlock::error::queue_full), ec.message());
        BOOST_TEST(conn.stats().rejected_queue_full == 1u);
        server.resume();
        for (int i = 0; i < 200 && answered < 10; ++i)
            co_await sleep_for(10ms);
        BOOST_TEST(answered == 10);
        auto again = command({"PING"});
        auto pong = co_await run_one(conn, again);
        BOOST_TEST(pong.str == "PONG");
        conn.close();
    }());
}

// Subscriptions count against the same bound: with max_queued_requests waiting, a SUBSCRIBE is
// refused (a QUEUEFULL error naming the bound, to its refusal handler) and an UNSUBSCRIBE is
// dropped; neither is queued. Before, they were queued without limit (a node that did not
// answer while waiters came and went on many resources).
BOOST_AUTO_TEST_CASE(a_full_request_queue_refuses_subscriptions_too) {
    redis_server server;
    asio::io_context ioc;
    std::vector<std::string> pushes;
    auto cfg = recording_pushes(server.uri(), pushes);
    cfg.max_queued_requests = 2;
    cfg.health_check_interval = 0ms;
    connection conn(ioc.get_executor(), cfg);
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        co_await expect_connect(conn);
        server.pause();
        int answered = 0;
        auto ping = command({"PING"});
        for (int i = 0; i < 2; ++i)
            conn.async_exec(ping, 10s,
                            [&](error_code ec, std::vector<resp::value>) { answered += ec ? 0 : 1; });
        std::vector<std::string> refusals;
        auto sub = command({"SUBSCRIBE", "c1"});
        conn.send_subscription(sub, "subscribe", 1, [&](const resp::value& v) { refusals.push_back(v.str); });
        BOOST_TEST_REQUIRE(co_await redlock::test::eventually([&] { return refusals.size() == 1u; }));
        BOOST_TEST(refusals.front().find("QUEUEFULL") == 0u, refusals.front());
        BOOST_TEST(refusals.front().find("max_queued_requests (2)") != std::string::npos, refusals.front());
        BOOST_TEST((conn.last_error().code == redlock::error::queue_full), conn.last_error().message);
        auto unsub = command({"UNSUBSCRIBE", "c1"});
        conn.send_subscription(unsub, "unsubscribe", 1, {});
        BOOST_TEST(
            co_await redlock::test::eventually([&] { return conn.stats().rejected_queue_full == 2u; }));

        server.resume();
        BOOST_TEST(co_await redlock::test::eventually([&] { return answered == 2; }));
        // Neither was written: the server saw no subscription, and the connection stayed in step.
        BOOST_TEST(pushes.empty());
        BOOST_TEST(server.command({"PUBSUB", "NUMSUB", "c1"}).elements.at(1).integer == 0);
        BOOST_TEST((co_await run_one(conn, ping)).str == "PONG");
        conn.send_subscription(sub, "subscribe", 1, [&](const resp::value& v) { refusals.push_back(v.str); });
        BOOST_TEST(co_await redlock::test::eventually([&] { return pushes.size() == 1u; }));
        BOOST_TEST(refusals.size() == 1u);
        BOOST_TEST(conn.stats().disconnects == 0u);
        conn.close();
    }());
}

BOOST_AUTO_TEST_SUITE_END()
