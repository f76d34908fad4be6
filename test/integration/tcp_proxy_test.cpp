// SPDX-License-Identifier: BSL-1.0
// The fault-injecting TCP proxy of the test support, against a real redis-server: what each
// mode, delay and reset does to the bytes. Clients here are plain blocking sockets (the proxy
// runs on its own thread), plus one redlock::redis::connection to show it reconnects through it.
#include "support/tcp_proxy.hpp"

#include "support/lock_helpers.hpp"
#include "support/redis_server.hpp"
#include "support/run_coro.hpp"
#include "support/wait_until.hpp"
#include <redlock/error.hpp>
#include <redlock/redis/connection.hpp>
#include <redlock/resp/request.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <poll.h>

namespace asio = boost::asio;
namespace resp = redlock::resp;
using namespace std::chrono_literals;
using boost::system::error_code;
using redlock::test::redis_server;
using redlock::test::tcp_proxy;
using redlock::test::wait_until;
using tcp = asio::ip::tcp;
using clock_type = std::chrono::steady_clock;

namespace {

// Generous: only ever waited out when a test is about to fail anyway.
constexpr auto patience = 10s;

std::string command(std::initializer_list<std::string_view> args) {
    resp::request r;
    std::vector<std::string_view> rest(args.begin() + 1, args.end());
    r.push_range(*args.begin(), rest);
    return r.payload();
}

const std::string pong = "+PONG\r\n";
const std::string ok = "+OK\r\n";

// The server's clock (TIME) in microseconds.
std::int64_t server_time_us(const redis_server& s) {
    const auto t = s.command({"TIME"});
    return std::stoll(t.elements.at(0).str) * 1'000'000 + std::stoll(t.elements.at(1).str);
}

struct read_result {
    std::string data;
    error_code ec;           // set when the connection ended (eof, connection_reset, ...)
    bool timed_out = false;  // nothing more arrived within the timeout
};

// A blocking client with reads bounded by a timeout (poll on the native socket).
class blocking_client {
public:
    explicit blocking_client(std::uint16_t port) : socket_(ioc_) {
        socket_.connect(tcp::endpoint(asio::ip::address_v4::loopback(), port));
        socket_.set_option(tcp::no_delay(true));
    }
    /// To `host`:`port`, from the loopback address `from`.
    blocking_client(const std::string& host, std::uint16_t port, const std::string& from) : socket_(ioc_) {
        socket_.open(tcp::v4());
        socket_.bind(tcp::endpoint(asio::ip::make_address_v4(from), 0));
        socket_.connect(tcp::endpoint(asio::ip::make_address_v4(host), port));
        socket_.set_option(tcp::no_delay(true));
    }

    void send(const std::string& bytes) { asio::write(socket_, asio::buffer(bytes)); }

    /// Reads until `n` bytes have arrived, the connection ends, or `timeout` passes.
    read_result read(std::size_t n, std::chrono::milliseconds timeout) {
        read_result r;
        const auto deadline = clock_type::now() + timeout;
        std::array<char, 65536> buf;
        while (r.data.size() < n) {
            const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - clock_type::now());
            if (left <= 0ms) {
                r.timed_out = true;
                break;
            }
            pollfd pfd{socket_.native_handle(), POLLIN, 0};
            const int rc = ::poll(&pfd, 1, static_cast<int>(left.count()));
            if (rc < 0 && errno == EINTR) continue;
            BOOST_TEST_REQUIRE(rc >= 0, "poll failed");
            if (rc == 0) {
                r.timed_out = true;
                break;
            }
            const auto want = std::min(buf.size(), n - r.data.size());
            const auto got = socket_.read_some(asio::buffer(buf.data(), want), r.ec);
            r.data.append(buf.data(), got);
            if (r.ec) break;
        }
        return r;
    }

    /// Reads exactly `expected.size()` bytes and returns them (fails the test on EOF or timeout).
    std::string read_exactly(const std::string& expected) {
        auto r = read(expected.size(), patience);
        BOOST_TEST_REQUIRE(!r.ec, "connection ended: " << r.ec.message() << " after \"" << r.data << "\"");
        BOOST_TEST_REQUIRE(!r.timed_out, "no complete reply within 10 s, got \"" << r.data << "\"");
        return r.data;
    }

    void close() { socket_.close(); }

private:
    asio::io_context ioc_;
    tcp::socket socket_;
};

// Connections the server has open, the fixture's own command() connection included.
std::size_t server_clients(const redis_server& server) {
    const auto list = server.command({"CLIENT", "LIST"}).str;
    std::size_t n = 0;
    for (std::size_t pos = list.find("id="); pos != std::string::npos; pos = list.find("id=", pos + 1))
        if (pos == 0 || list[pos - 1] == '\n') ++n;
    return n;
}

std::chrono::milliseconds since(clock_type::time_point t0) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(clock_type::now() - t0);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(tcp_proxy_test)

BOOST_AUTO_TEST_CASE(pass_mode_forwards_both_ways) {
    redis_server server;
    tcp_proxy proxy(server.port());
    BOOST_TEST(proxy.port() != 0);
    BOOST_TEST(proxy.port() != server.port());
    BOOST_TEST(proxy.uri() == "redis://127.0.0.1:" + std::to_string(proxy.port()));
    BOOST_TEST(proxy.accepted() == 0u);

    blocking_client client(proxy.port());
    client.send(command({"PING"}));
    BOOST_TEST(client.read_exactly(pong) == pong);
    client.send(command({"SET", "k", "v"}));
    BOOST_TEST(client.read_exactly(ok) == ok);
    BOOST_TEST(server.command({"GET", "k"}).str == "v");  // it went to this very server

    // Many chunks each way, pipelined: nothing lost, duplicated or reordered.
    std::string big(3 * 1024 * 1024, '\0');
    for (std::size_t i = 0; i < big.size(); ++i)
        big[i] = static_cast<char>('a' + (i * 7 + i / 4096) % 26);
    client.send(command({"SET", "big", big}) + command({"GET", "big"}) + command({"ECHO", "after"}));
    const std::string expected = ok + "$" + std::to_string(big.size()) + "\r\n" + big + "\r\n$5\r\nafter\r\n";
    BOOST_TEST((client.read_exactly(expected) == expected));
    BOOST_TEST(proxy.bytes_from_clients() > big.size());
    BOOST_TEST(proxy.bytes_from_server() == expected.size() + pong.size() + ok.size());
    BOOST_TEST(proxy.accepted() == 1u);
}

BOOST_AUTO_TEST_CASE(delays_hold_each_direction_back) {
    redis_server server;
    tcp_proxy proxy(server.port());
    blocking_client client(proxy.port());
    client.send(command({"PING"}));
    client.read_exactly(pong);

    proxy.set_reply_delay(100ms);
    auto t0 = clock_type::now();
    client.send(command({"PING"}));
    BOOST_TEST(client.read_exactly(pong) == pong);
    BOOST_TEST(since(t0) >= 100ms);

    proxy.set_reply_delay(0ms);
    proxy.set_request_delay(300ms);
    // The request itself is held: the server runs it 300 ms after it was sent at the earliest,
    // by the server's own clock (it writes down when it ran it).
    const auto before = server_time_us(server);
    t0 = clock_type::now();
    client.send(command({"EVAL",
                         "local t = redis.call('TIME') "
                         "return redis.call('SET', KEYS[1], t[1] .. string.format('%06d', t[2]))",
                         "1", "held"}));
    BOOST_TEST(client.read_exactly(ok) == ok);
    BOOST_TEST(since(t0) >= 300ms);
    const auto ran_at = std::stoll(server.command({"GET", "held"}).str);
    BOOST_TEST(ran_at - before >= 300'000, "ran " << ran_at - before << " us after it was sent");

    proxy.set_request_delay(100ms);
    proxy.set_reply_delay(100ms);
    t0 = clock_type::now();
    client.send(command({"PING"}));
    BOOST_TEST(client.read_exactly(pong) == pong);
    BOOST_TEST(since(t0) >= 200ms);  // both ways
}

BOOST_AUTO_TEST_CASE(a_shorter_delay_never_lets_later_replies_overtake) {
    redis_server server;
    tcp_proxy proxy(server.port());
    blocking_client client(proxy.port());
    proxy.set_reply_delay(300ms);
    const auto t0 = clock_type::now();
    client.send(command({"ECHO", "first"}));
    const std::string first = "$5\r\nfirst\r\n";
    // Once the proxy has read the first reply it is queued with 300 ms; the second one, read
    // after the delay is lowered to 0, is due earlier but must still come after it.
    BOOST_TEST_REQUIRE(wait_until([&] { return proxy.bytes_from_server() >= first.size(); }));
    proxy.set_reply_delay(0ms);
    client.send(command({"ECHO", "second"}));
    const std::string both = first + "$6\r\nsecond\r\n";
    BOOST_TEST(client.read_exactly(both) == both);
    BOOST_TEST(since(t0) >= 300ms);
}

BOOST_AUTO_TEST_CASE(a_shorter_delay_never_lets_later_requests_overtake) {
    redis_server server;
    tcp_proxy proxy(server.port());
    blocking_client client(proxy.port());
    proxy.set_request_delay(300ms);
    const auto t0 = clock_type::now();
    const auto set_first = command({"SET", "k", "first"});
    client.send(set_first);
    BOOST_TEST_REQUIRE(wait_until([&] { return proxy.bytes_from_clients() >= set_first.size(); }));
    proxy.set_request_delay(0ms);
    client.send(command({"SET", "k", "second"}));
    BOOST_TEST(client.read_exactly(ok + ok) == ok + ok);
    BOOST_TEST(since(t0) >= 300ms);
    // Run in the order sent: had the second SET overtaken the first, "first" would be left.
    BOOST_TEST(server.command({"GET", "k"}).str == "second");
}

BOOST_AUTO_TEST_CASE(drop_replies_runs_the_command_but_loses_its_reply) {
    redis_server server;
    tcp_proxy proxy(server.port());
    blocking_client client(proxy.port());
    client.send(command({"PING"}));
    client.read_exactly(pong);

    proxy.set_mode(tcp_proxy::mode::drop_replies);
    const auto before = proxy.bytes_from_server();
    client.send(command({"SET", "k", "v"}));
    // The server answered (so it ran the SET), and the proxy has read and discarded the answer.
    BOOST_TEST_REQUIRE(wait_until([&] { return proxy.bytes_from_server() >= before + ok.size(); }));
    BOOST_TEST(server.command({"GET", "k"}).str == "v");
    const auto nothing = client.read(1, 300ms);
    BOOST_TEST(nothing.timed_out);
    BOOST_TEST(!nothing.ec);
    BOOST_TEST(nothing.data.empty());

    // Discarded, not held back: back to pass, the connection that lost them is reset, and a
    // new one is whole.
    proxy.set_mode(tcp_proxy::mode::pass);
    const auto reset = client.read(1, patience);
    BOOST_TEST(reset.data.empty());
    BOOST_TEST((reset.ec == asio::error::connection_reset), reset.ec.message());
    blocking_client again(proxy.port());
    again.send(command({"PING"}));
    BOOST_TEST(again.read_exactly(pong) == pong);
}

// A partition may set another mode on a link that lost replies, with no pass between: the
// replies after the hole must not reach the client, which would match them to the wrong requests.
BOOST_AUTO_TEST_CASE(a_direction_that_lost_bytes_forwards_nothing_more_whatever_the_mode) {
    redis_server server;
    tcp_proxy proxy(server.port());
    blocking_client client(proxy.port());
    client.send(command({"PING"}));
    client.read_exactly(pong);

    proxy.set_mode(tcp_proxy::mode::drop_replies);
    auto before = proxy.bytes_from_server();
    client.send(command({"SET", "k", "1"}));
    BOOST_TEST_REQUIRE(wait_until([&] { return proxy.bytes_from_server() >= before + ok.size(); }));
    // A command the server answers only later, once the link forwards replies again.
    const auto pop = command({"BLPOP", "q", "0"});
    before = proxy.bytes_from_clients();
    client.send(pop);
    BOOST_TEST_REQUIRE(wait_until([&] { return proxy.bytes_from_clients() >= before + pop.size(); }));
    proxy.set_mode(tcp_proxy::mode::drop_requests);
    before = proxy.bytes_from_server();
    server.command({"RPUSH", "q", "x"});
    BOOST_TEST_REQUIRE(wait_until([&] { return proxy.bytes_from_server() > before; }));
    const auto nothing = client.read(1, 300ms);
    BOOST_TEST(nothing.timed_out);
    BOOST_TEST(nothing.data.empty());

    proxy.set_mode(tcp_proxy::mode::pass);
    const auto reset = client.read(1, patience);
    BOOST_TEST(reset.data.empty());
    BOOST_TEST((reset.ec == asio::error::connection_reset), reset.ec.message());
}

BOOST_AUTO_TEST_CASE(blackhole_discards_both_ways) {
    redis_server server;
    tcp_proxy proxy(server.port());
    blocking_client client(proxy.port());
    client.send(command({"PING"}));
    client.read_exactly(pong);

    // client->server: the SET is read by the proxy and never reaches the server.
    proxy.set_mode(tcp_proxy::mode::blackhole);
    const auto set = command({"SET", "k", "v"});
    const auto before = proxy.bytes_from_clients();
    client.send(set);
    BOOST_TEST_REQUIRE(wait_until([&] { return proxy.bytes_from_clients() >= before + set.size(); }));
    const auto nothing = client.read(1, 300ms);
    BOOST_TEST(nothing.timed_out);
    BOOST_TEST(nothing.data.empty());
    BOOST_TEST(server.command({"GET", "k"}).is_null());
    // Back to pass: the connection that lost the SET is reset.
    proxy.set_mode(tcp_proxy::mode::pass);
    BOOST_TEST((client.read(1, patience).ec == asio::error::connection_reset));

    // server->client: a BLPOP that reached the server in pass mode is answered while the link
    // is a blackhole; the answer is read by the proxy and never reaches the client.
    blocking_client second(proxy.port());
    second.send(command({"BLPOP", "list", "0"}));
    BOOST_TEST_REQUIRE(wait_until([&] {
        return server.command({"INFO", "clients"}).str.find("blocked_clients:1") != std::string::npos;
    }));
    proxy.set_mode(tcp_proxy::mode::blackhole);
    const auto replies_before = proxy.bytes_from_server();
    BOOST_TEST(server.command({"RPUSH", "list", "x"}).integer == 1);
    const std::string popped = "*2\r\n$4\r\nlist\r\n$1\r\nx\r\n";
    BOOST_TEST_REQUIRE(
        wait_until([&] { return proxy.bytes_from_server() >= replies_before + popped.size(); }));
    const auto still_nothing = second.read(1, 300ms);
    BOOST_TEST(still_nothing.timed_out);
    BOOST_TEST(still_nothing.data.empty());

    // Nothing was merely held back: the connection is reset, not handed the answer late, and
    // the SET never ran.
    proxy.set_mode(tcp_proxy::mode::pass);
    const auto reset = second.read(1, patience);
    BOOST_TEST(reset.data.empty());
    BOOST_TEST((reset.ec == asio::error::connection_reset), reset.ec.message());
    BOOST_TEST(server.command({"GET", "k"}).is_null());
}

BOOST_AUTO_TEST_CASE(the_clients_cut_by_address_lose_the_server_while_the_others_keep_it) {
    redlock::test::redis_server_options o;
    o.host = "127.0.0.3";
    redis_server server(o);
    // Its port is known after the proxy's (a cluster node's bus).
    tcp_proxy proxy(server.host(), 0);
    proxy.set_upstream_port(server.port());
    BOOST_TEST(proxy.uri() == "redis://127.0.0.3:" + std::to_string(proxy.port()));
    blocking_client cut(server.host(), proxy.port(), "127.0.0.4");
    blocking_client kept(server.host(), proxy.port(), "127.0.0.5");
    const auto ping = command({"PING"});
    for (auto* c : {&cut, &kept}) {
        c->send(ping);
        c->read_exactly(pong);
    }

    proxy.cut_clients_from({"127.0.0.4"});
    const auto before = proxy.bytes_from_clients();
    cut.send(ping);
    kept.send(ping);
    kept.read_exactly(pong);
    // A connection made during the cut is cut too.
    blocking_client later(server.host(), proxy.port(), "127.0.0.4");
    later.send(ping);
    BOOST_TEST_REQUIRE(wait_until([&] { return proxy.bytes_from_clients() >= before + 3 * ping.size(); }));
    for (auto* c : {&cut, &later}) {
        const auto nothing = c->read(1, 300ms);
        BOOST_TEST(nothing.timed_out);
        BOOST_TEST(nothing.data.empty());
    }

    // Healed: the connections that lost bytes are reset, never handed a late answer; a new one
    // from the same address passes.
    proxy.cut_clients_from({});
    for (auto* c : {&cut, &later}) {
        const auto reset = c->read(1, patience);
        BOOST_TEST(reset.data.empty());
        BOOST_TEST((reset.ec == asio::error::connection_reset), reset.ec.message());
    }
    blocking_client again(server.host(), proxy.port(), "127.0.0.4");
    again.send(ping);
    again.read_exactly(pong);
    kept.send(ping);
    kept.read_exactly(pong);
    BOOST_CHECK_THROW(proxy.cut_clients_from({"localhost"}), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(drop_requests_loses_commands_but_still_delivers_replies) {
    redis_server server;
    tcp_proxy proxy(server.port());
    blocking_client client(proxy.port());
    // A BLPOP that reached the server before the link went one-way.
    client.send(command({"BLPOP", "list", "0"}));
    BOOST_TEST_REQUIRE(wait_until([&] {
        return server.command({"INFO", "clients"}).str.find("blocked_clients:1") != std::string::npos;
    }));
    proxy.set_mode(tcp_proxy::mode::drop_requests);
    const auto set = command({"SET", "k", "v"});
    const auto before = proxy.bytes_from_clients();
    client.send(set);
    BOOST_TEST_REQUIRE(wait_until([&] { return proxy.bytes_from_clients() >= before + set.size(); }));
    // The reply direction still works: the BLPOP's answer arrives...
    BOOST_TEST(server.command({"RPUSH", "list", "x"}).integer == 1);
    const std::string popped = "*2\r\n$4\r\nlist\r\n$1\r\nx\r\n";
    BOOST_TEST(client.read_exactly(popped) == popped);
    // ...and the SET never reached the server, so nothing more comes.
    BOOST_TEST(client.read(1, 300ms).timed_out);
    BOOST_TEST(server.command({"GET", "k"}).is_null());
    proxy.heal();
    BOOST_TEST((client.read(1, patience).ec == asio::error::connection_reset));
    blocking_client again(proxy.port());
    again.send(command({"PING"}));
    BOOST_TEST(again.read_exactly(pong) == pong);
}

BOOST_AUTO_TEST_CASE(slicing_delivers_every_byte_in_one_byte_writes) {
    redis_server server;
    tcp_proxy proxy(server.port());
    proxy.set_slice(true);
    // The connection parses a reply that arrives a byte at a time.
    asio::io_context ioc;
    redlock::redis::connection_config cc;
    cc.address.host = "127.0.0.1";
    cc.address.port = proxy.port();
    redlock::redis::connection conn(ioc.get_executor(), cc);
    const std::string big(3000, 'x');
    redlock::test::run_coro(ioc, [&]() -> asio::awaitable<void> {
        co_await conn.async_connect(asio::use_awaitable);
        resp::request req;
        req.push("SET", "big", big);
        req.push("GET", "big");
        auto [ec, replies] = co_await conn.async_exec(req, 10s, asio::as_tuple(asio::use_awaitable));
        BOOST_TEST_REQUIRE(!ec, ec.message());
        BOOST_TEST_REQUIRE(replies.size() == 2u);
        BOOST_TEST(replies[1].str == big);
    }());
    BOOST_TEST(server.command({"STRLEN", "big"}).integer == 3000);
}

// A TCP stream never loses bytes in the middle and goes on: the proxy's discarding modes end
// every connection that lost bytes (a reset) when they heal, as a real partition ends in a
// stall or a reset. A connection that went on would match the replies after the hole to the
// wrong requests: a timed-out request waits, abandoned, for a reply that never comes, and takes
// the next one. This checks that a pipelining client never gets another request's reply.
BOOST_AUTO_TEST_CASE(a_connection_that_lost_bytes_is_reset_when_the_link_heals) {
    redis_server server;
    tcp_proxy proxy(server.port());
    asio::io_context ioc;
    redlock::redis::connection_config cc;
    cc.address.host = "127.0.0.1";
    cc.address.port = proxy.port();
    redlock::redis::connection conn(ioc.get_executor(), cc);
    constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);
    redlock::test::run_coro(ioc, [&]() -> asio::awaitable<void> {
        co_await conn.async_connect(asio::use_awaitable);
        for (auto m :
             {tcp_proxy::mode::drop_requests, tcp_proxy::mode::drop_replies, tcp_proxy::mode::blackhole}) {
            proxy.set_mode(m);
            const auto resets_before = conn.stats().disconnects;
            resp::request lost;
            lost.push("ECHO", "lost");
            auto [lost_ec, lost_replies] = co_await conn.async_exec(lost, 100ms, tuple_awaitable);
            BOOST_TEST((lost_ec == redlock::error::request_timeout), lost_ec.message());
            proxy.set_mode(tcp_proxy::mode::pass);
            // Two requests in one pipeline: each gets its own reply, or reply_lost (written on the
            // connection the heal resets, never answered there), never the other's.
            std::optional<std::pair<error_code, std::vector<resp::value>>> first, second;
            resp::request a;
            a.push("ECHO", "a");
            resp::request b;
            b.push("ECHO", "b");
            conn.async_exec(
                a, 2s, [&](error_code ec, std::vector<resp::value> v) { first.emplace(ec, std::move(v)); });
            conn.async_exec(
                b, 2s, [&](error_code ec, std::vector<resp::value> v) { second.emplace(ec, std::move(v)); });
            BOOST_TEST_REQUIRE(co_await redlock::test::eventually([&] { return first && second; }, 5s));
            for (const auto& [answer, echoed] : {std::pair{&first, "a"}, std::pair{&second, "b"}}) {
                const auto& [ec, replies] = **answer;
                if (ec) {
                    BOOST_TEST((ec == redlock::error::reply_lost), echoed << ": " << ec.message());
                } else {
                    BOOST_TEST_REQUIRE(replies.size() == 1u);
                    BOOST_TEST(replies[0].str == echoed);
                }
            }
            // The connection that lost bytes was reset, and serves again.
            BOOST_TEST(co_await redlock::test::eventually(
                [&] { return conn.stats().disconnects > resets_before && conn.is_connected(); }, 5s));
            resp::request ping;
            ping.push("ECHO", "again");
            auto [ec, replies] = co_await conn.async_exec(ping, 2s, tuple_awaitable);
            BOOST_TEST_REQUIRE(!ec, ec.message());
            BOOST_TEST(replies.at(0).str == "again");
        }
    }());
}

BOOST_AUTO_TEST_CASE(a_reply_cut_after_n_bytes_arrives_in_part_then_the_connection_resets) {
    redis_server server;
    tcp_proxy proxy(server.port());
    blocking_client client(proxy.port());
    BOOST_TEST(server.command({"SET", "k", "0123456789"}).str == "OK");
    proxy.cut_replies_after(7);
    client.send(command({"GET", "k"}));
    const auto r = client.read(100, patience);
    BOOST_TEST(r.data == "$10\r\n01");  // the first 7 bytes of "$10\r\n0123456789\r\n"
    BOOST_TEST((r.ec == asio::error::connection_reset), r.ec.message());
    // One-shot: the next connection is whole.
    blocking_client again(proxy.port());
    again.send(command({"PING"}));
    BOOST_TEST(again.read_exactly(pong) == pong);
}

BOOST_AUTO_TEST_CASE(a_request_cut_after_n_bytes_never_runs) {
    redis_server server;
    tcp_proxy proxy(server.port());
    blocking_client client(proxy.port());
    proxy.cut_requests_after(10);
    client.send(command({"SET", "k", "v"}));
    const auto r = client.read(1, patience);
    BOOST_TEST(r.data.empty());
    BOOST_TEST((r.ec == asio::error::connection_reset), r.ec.message());
    BOOST_TEST(server.command({"GET", "k"}).is_null());
}

BOOST_AUTO_TEST_CASE(jitter_delays_but_keeps_the_order) {
    redis_server server;
    tcp_proxy proxy(server.port());
    blocking_client client(proxy.port());
    proxy.set_jitter(40ms);
    std::string expected;
    for (int i = 0; i < 20; ++i) {
        client.send(command({"ECHO", std::to_string(i)}));
        expected += "$" + std::to_string(std::to_string(i).size()) + "\r\n" + std::to_string(i) + "\r\n";
    }
    BOOST_TEST(client.read_exactly(expected) == expected);
}

BOOST_AUTO_TEST_CASE(reset_connections_sends_a_reset_both_ways) {
    redis_server server;
    tcp_proxy proxy(server.port());
    proxy.reset_connections();  // none yet: nothing happens
    blocking_client client(proxy.port());
    client.send(command({"PING"}));
    client.read_exactly(pong);
    BOOST_TEST(server_clients(server) == 2u);  // the proxy's upstream and command()'s own

    proxy.reset_connections();
    const auto r = client.read(1, patience);
    BOOST_TEST(!r.timed_out);
    BOOST_TEST(r.data.empty());
    BOOST_TEST((r.ec == asio::error::connection_reset), r.ec.message());
    BOOST_TEST(wait_until([&] { return server_clients(server) == 1u; }));

    // The proxy itself goes on.
    blocking_client again(proxy.port());
    again.send(command({"PING"}));
    BOOST_TEST(again.read_exactly(pong) == pong);
    BOOST_TEST(proxy.accepted() == 2u);
}

BOOST_AUTO_TEST_CASE(a_client_that_closes_closes_the_upstream) {
    redis_server server;
    tcp_proxy proxy(server.port());
    blocking_client client(proxy.port());
    client.send(command({"PING"}));
    client.read_exactly(pong);
    BOOST_TEST(server_clients(server) == 2u);
    client.close();
    BOOST_TEST(wait_until([&] { return server_clients(server) == 1u; }));
}

BOOST_AUTO_TEST_CASE(a_server_that_closes_closes_the_client) {
    redis_server server;
    tcp_proxy proxy(server.port());
    blocking_client client(proxy.port());
    client.send(command({"PING"}));
    client.read_exactly(pong);
    // SKIPME is the default: this kills the proxy's upstream, not command()'s own connection.
    BOOST_TEST(server.command({"CLIENT", "KILL", "TYPE", "normal"}).integer == 1);
    const auto r = client.read(1, patience);
    BOOST_TEST(!r.timed_out);
    BOOST_TEST(r.data.empty());
    BOOST_TEST((r.ec == asio::error::eof), r.ec.message());
}

BOOST_AUTO_TEST_CASE(what_is_queued_is_delivered_before_the_close) {
    redis_server server;
    tcp_proxy proxy(server.port());
    blocking_client client(proxy.port());
    proxy.set_reply_delay(200ms);
    const auto t0 = clock_type::now();
    client.send(command({"QUIT"}));  // the server answers +OK and closes at once
    const auto r = client.read(ok.size() + 1, patience);
    BOOST_TEST(r.data == ok);
    BOOST_TEST((r.ec == asio::error::eof), r.ec.message());
    BOOST_TEST(since(t0) >= 200ms);
}

BOOST_AUTO_TEST_CASE(accepted_counts_connections) {
    redis_server server;
    tcp_proxy proxy(server.port());
    BOOST_TEST(proxy.accepted() == 0u);
    std::vector<std::unique_ptr<blocking_client>> clients;
    for (int i = 0; i < 3; ++i) {
        clients.push_back(std::make_unique<blocking_client>(proxy.port()));
        clients.back()->send(command({"PING"}));
        clients.back()->read_exactly(pong);
    }
    BOOST_TEST(proxy.accepted() == 3u);
    clients.clear();
    blocking_client another(proxy.port());
    another.send(command({"PING"}));
    another.read_exactly(pong);
    BOOST_TEST(proxy.accepted() == 4u);
}

BOOST_AUTO_TEST_CASE(an_unreachable_upstream_closes_the_client) {
    redis_server server;
    const auto port = server.port();
    server.stop();  // nothing listens there any more
    tcp_proxy proxy(port);
    blocking_client client(proxy.port());  // the proxy accepts, then fails to connect upstream
    const auto r = client.read(1, patience);
    BOOST_TEST(!r.timed_out);
    BOOST_TEST(r.data.empty());
    BOOST_TEST(r.ec.failed());
    BOOST_TEST(proxy.accepted() == 1u);
}

BOOST_AUTO_TEST_CASE(destruction_closes_live_connections_without_waiting_for_delays) {
    redis_server server;
    auto proxy = std::make_unique<tcp_proxy>(server.port());
    blocking_client client(proxy->port());
    client.send(command({"PING"}));
    client.read_exactly(pong);
    proxy->set_reply_delay(std::chrono::minutes(10));
    const auto before = proxy->bytes_from_server();
    client.send(command({"PING"}));
    BOOST_TEST_REQUIRE(wait_until([&] { return proxy->bytes_from_server() >= before + pong.size(); }));

    const auto t0 = clock_type::now();
    proxy.reset();
    BOOST_TEST(since(t0) < 5s);  // the delayed reply is dropped, not waited for
    const auto r = client.read(1, patience);
    BOOST_TEST(!r.timed_out);
    BOOST_TEST(r.data.empty());
    BOOST_TEST(r.ec.failed());
    BOOST_TEST(wait_until([&] { return server_clients(server) == 1u; }));
}

namespace {

constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);

asio::awaitable<bool> connect_ok(redlock::redis::connection* conn) {
    auto [ec] = co_await conn->async_connect(tuple_awaitable);
    co_return !ec;
}

asio::awaitable<bool> ping_ok(redlock::redis::connection* conn) {
    resp::request req;
    req.push("PING");
    auto [ec, replies] = co_await conn->async_exec(req, std::chrono::milliseconds(1000), tuple_awaitable);
    co_return !ec && replies.size() == 1 && replies[0].str == "PONG";
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_redis_connection_reconnects_through_the_proxy_after_a_reset) {
    redis_server server;
    tcp_proxy proxy(server.port());
    asio::io_context ioc;
    redlock::redis::connection_config cfg;
    std::string why;
    BOOST_TEST_REQUIRE(!redlock::redis::parse_node_uri(proxy.uri(), cfg.address, why), why);
    cfg.reconnect_min_delay = 10ms;
    cfg.reconnect_max_delay = 100ms;
    redlock::redis::connection conn(ioc.get_executor(), cfg);
    BOOST_TEST_REQUIRE(redlock::test::run_coro(ioc, connect_ok(&conn)));
    BOOST_TEST(redlock::test::run_coro(ioc, ping_ok(&conn)));
    BOOST_TEST(proxy.accepted() == 1u);

    proxy.reset_connections();
    // The first request may be lost with the old connection; then it reconnects through the proxy.
    const auto deadline = clock_type::now() + patience;
    bool recovered = false;
    while (!recovered && clock_type::now() < deadline)
        recovered = redlock::test::run_coro(ioc, ping_ok(&conn));
    BOOST_TEST(recovered);
    BOOST_TEST(conn.stats().disconnects >= 1u);
    BOOST_TEST(conn.stats().connects >= 2u);
    BOOST_TEST(proxy.accepted() >= 2u);
}

BOOST_AUTO_TEST_SUITE_END()
