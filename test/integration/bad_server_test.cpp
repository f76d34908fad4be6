// SPDX-License-Identifier: BSL-1.0
// A hostile or broken server: the connection must fail with a clear error code and message,
// never crash, hang or allocate what the server declares. The peer here is a scripted TCP
// server that answers each command it receives with the next canned reply.
#include "resp/reply_parser.hpp"
#include "support/run_coro.hpp"
#include <redlock/error.hpp>
#include <redlock/redis/connection.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/test/unit_test.hpp>

#include <memory>
#include <string>
#include <vector>

namespace asio = boost::asio;
namespace resp = redlock::resp;
using namespace std::chrono_literals;
using boost::system::error_code;
using redlock::redis::connection;
using redlock::redis::connection_config;
using redlock::test::run_coro;

namespace {

constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);

// A minimal RESP3 HELLO reply, enough for the handshake to accept the server.
const std::string hello_reply = "%1\r\n+proto\r\n:3\r\n";

class scripted_server {
public:
    scripted_server(asio::io_context& ioc, std::vector<std::string> replies)
        : acceptor_(ioc, asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)),
          replies_(std::make_shared<std::vector<std::string>>(std::move(replies))) {
        asio::co_spawn(ioc, serve(std::move(acceptor_), replies_, received_), asio::detached);
    }
    unsigned short port() const { return port_; }
    /// Every command received so far, its words joined by spaces.
    const std::vector<std::string>& received() const { return *received_; }

private:
    static asio::awaitable<void> serve(asio::ip::tcp::acceptor acceptor,
                                       std::shared_ptr<std::vector<std::string>> replies,
                                       std::shared_ptr<std::vector<std::string>> received) {
        auto [aec, socket] = co_await acceptor.async_accept(tuple_awaitable);
        if (aec) co_return;
        resp::reply_parser commands;  // requests are arrays of bulk strings: the same grammar
        std::size_t next = 0;
        char buf[4096];
        for (;;) {
            auto [ec, n] = co_await socket.async_read_some(asio::buffer(buf), tuple_awaitable);
            if (ec) co_return;
            std::string_view data(buf, n);
            while (!data.empty()) {
                data.remove_prefix(commands.feed(data));
                if (commands.error()) co_return;
                if (!commands.done()) break;
                auto command = commands.take();
                std::string words;
                for (const auto& w : command.elements)
                    words += (words.empty() ? "" : " ") + w.str;
                received->push_back(std::move(words));
                if (next < replies->size()) {
                    auto [wec, wn] =
                        co_await asio::async_write(socket, asio::buffer((*replies)[next++]), tuple_awaitable);
                    if (wec) co_return;
                }
            }
        }
    }

    asio::ip::tcp::acceptor acceptor_;
    unsigned short port_ = acceptor_.local_endpoint().port();
    std::shared_ptr<std::vector<std::string>> replies_;
    std::shared_ptr<std::vector<std::string>> received_ = std::make_shared<std::vector<std::string>>();
};

connection_config config_for(unsigned short port) {
    connection_config cfg;
    cfg.address.host = "127.0.0.1";
    cfg.address.port = port;
    cfg.client_name.clear();  // the handshake is HELLO alone
    cfg.connect_timeout = 2000ms;
    cfg.reconnect_min_delay = 1000ms;  // one attempt is all these tests need
    return cfg;
}

// Connects to a server that answers HELLO with `reply` and checks the error it produces.
void expect_handshake_error(const std::string& reply, redlock::error expected) {
    asio::io_context ioc;
    scripted_server server(ioc, {reply});
    connection conn(ioc.get_executor(), config_for(server.port()));
    run_coro(
        ioc,
        [&]() -> asio::awaitable<void> {
            auto [ec] = co_await conn.async_connect(tuple_awaitable);
            BOOST_TEST((ec == expected), ec.message());
            auto err = conn.last_error();
            BOOST_TEST((err.code == expected));
            BOOST_TEST(err.message.find("malformed reply from redis://127.0.0.1") != std::string::npos,
                       err.message);
            conn.close();
        }(),
        10s);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(bad_server_suite)

BOOST_AUTO_TEST_CASE(garbage_instead_of_resp) {
    expect_handshake_error("HTTP/1.1 400 Bad Request\r\n\r\n", redlock::error::resp_invalid_type);
}

BOOST_AUTO_TEST_CASE(a_4_gb_bulk_length_is_refused_before_any_allocation) {
    expect_handshake_error("$4294967296\r\n", redlock::error::resp_bulk_too_large);
}

BOOST_AUTO_TEST_CASE(ten_thousand_nested_arrays) {
    std::string nested;
    for (int i = 0; i < 10000; ++i)
        nested += "*1\r\n";
    nested += ":1\r\n";
    expect_handshake_error(nested, redlock::error::resp_nesting_too_deep);
}

BOOST_AUTO_TEST_CASE(a_length_that_overflows) {
    expect_handshake_error("*99999999999999999999\r\n", redlock::error::resp_length_overflow);
}

BOOST_AUTO_TEST_CASE(an_endless_line) {
    expect_handshake_error("+" + std::string(100 * 1024, 'x'), redlock::error::resp_line_too_long);
}

BOOST_AUTO_TEST_CASE(garbage_after_the_handshake_fails_the_request_not_the_process) {
    asio::io_context ioc;
    scripted_server server(ioc, {hello_reply, ":1\r\n", "?? not resp\r\n"});
    auto cfg = config_for(server.port());
    connection conn(ioc.get_executor(), cfg);
    run_coro(
        ioc,
        [&]() -> asio::awaitable<void> {
            auto [ec] = co_await conn.async_connect(tuple_awaitable);
            BOOST_TEST_REQUIRE(!ec, ec.message() << ": " << conn.last_error().message);
            resp::request req;
            req.push("INCR", "k");
            auto [ec1, first] = co_await conn.async_exec(req, tuple_awaitable);
            BOOST_TEST_REQUIRE(!ec1);
            BOOST_TEST(first.at(0).integer == 1);
            auto [ec2, second] = co_await conn.async_exec(req, tuple_awaitable);
            BOOST_TEST((ec2 == redlock::error::resp_invalid_type), ec2.message());
            BOOST_TEST(conn.last_error().message.find("malformed reply") != std::string::npos);
            conn.close();
        }(),
        10s);
}

BOOST_AUTO_TEST_CASE(a_server_without_hello_gets_resp2_and_a_separate_auth) {
    asio::io_context ioc;
    // Redis < 6: HELLO is unknown; then AUTH, then CLIENT SETNAME, answered in RESP2.
    scripted_server server(ioc, {"-ERR unknown command 'HELLO', with args beginning with: '3'\r\n", "+OK\r\n",
                                 "+OK\r\n", "*2\r\n$1\r\na\r\n$-1\r\n"});
    auto cfg = config_for(server.port());
    cfg.address.password = "pw";
    cfg.client_name = "old-server-client";
    connection conn(ioc.get_executor(), cfg);
    run_coro(
        ioc,
        [&]() -> asio::awaitable<void> {
            auto [ec] = co_await conn.async_connect(tuple_awaitable);
            BOOST_TEST_REQUIRE(!ec, ec.message() << ": " << conn.last_error().message);
            BOOST_TEST(conn.protocol() == 2);
            resp::request req;
            req.push("MGET", "a", "b");
            auto [ec1, replies] = co_await conn.async_exec(req, tuple_awaitable);
            BOOST_TEST_REQUIRE(!ec1);
            BOOST_TEST_REQUIRE(replies.at(0).elements.size() == 2u);
            BOOST_TEST(replies[0].elements[0].str == "a");
            BOOST_TEST(replies[0].elements[1].is_null());  // RESP2 null bulk
            std::vector<std::string> expected{"HELLO 3 AUTH default pw", "AUTH pw",
                                              "CLIENT SETNAME old-server-client", "MGET a b"};
            BOOST_TEST(server.received() == expected, boost::test_tools::per_element());
            conn.close();
        }(),
        10s);
}

BOOST_AUTO_TEST_CASE(a_hello_reply_of_the_wrong_shape) {
    asio::io_context ioc;
    scripted_server server(ioc, {":42\r\n"});
    connection conn(ioc.get_executor(), config_for(server.port()));
    run_coro(
        ioc,
        [&]() -> asio::awaitable<void> {
            auto [ec] = co_await conn.async_connect(tuple_awaitable);
            BOOST_TEST((ec == redlock::error::unexpected_reply), ec.message());
            BOOST_TEST(conn.last_error().message.find("HELLO") != std::string::npos);
            conn.close();
        }(),
        10s);
}

BOOST_AUTO_TEST_CASE(a_server_that_closes_mid_handshake) {
    asio::io_context ioc;
    // Answers nothing and goes away: the connection attempt fails with the socket's error.
    asio::ip::tcp::acceptor acceptor(ioc, asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    auto port = acceptor.local_endpoint().port();
    acceptor.async_accept([](error_code, asio::ip::tcp::socket s) { s.close(); });
    connection conn(ioc.get_executor(), config_for(port));
    run_coro(
        ioc,
        [&]() -> asio::awaitable<void> {
            auto [ec] = co_await conn.async_connect(tuple_awaitable);
            BOOST_TEST((ec == asio::error::eof || ec == asio::error::connection_reset), ec.message());
            conn.close();
        }(),
        10s);
}

BOOST_AUTO_TEST_SUITE_END()
