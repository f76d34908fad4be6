// Uses the installed headers and library the way an application would, without a server.
#include <redlock/error.hpp>
#include <redlock/redis/connection.hpp>
#include <redlock/redis/node_address.hpp>
#include <redlock/resp/request.hpp>

#include <boost/asio/io_context.hpp>

#include <cstring>
#include <iostream>

int main() {
    redlock::resp::request req;
    req.push("SET", "k", 42);
    if (req.payload() != "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$2\r\n42\r\n") {
        std::cerr << "unexpected request bytes\n";
        return 1;
    }

    redlock::redis::node_address addr;
    std::string why;
    if (redlock::redis::parse_node_uri("redis://:pw@127.0.0.1:7001/2", addr, why) || addr.port != 7001 ||
        addr.db != 2) {
        std::cerr << "URI parsing failed: " << why << "\n";
        return 1;
    }
    auto ec = redlock::redis::parse_node_uri("redis://host:99999", addr, why);
    if (ec != redlock::error::invalid_uri || std::strcmp(ec.category().name(), "redlock") != 0) {
        std::cerr << "expected invalid_uri, got " << ec.message() << "\n";
        return 1;
    }

    boost::asio::io_context ioc;
    redlock::redis::connection conn(ioc.get_executor(), redlock::redis::connection_config{addr});
    conn.close();
    ioc.run();
    std::cout << "consumer OK: " << why << "\n";
    return 0;
}
