// SPDX-License-Identifier: BSL-1.0
// Uses the installed headers and library the way an application would, without a server.
#include <redlock/redis/connection.hpp>
#include <redlock/redis/node_address.hpp>
#include <redlock/redlock.hpp>
#include <redlock/resp/request.hpp>

#include <boost/asio/io_context.hpp>

#include <chrono>
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

    // The lock API end to end, against a port nobody listens on: the acquire fails with its
    // cause, the events and metrics tell it, and the client closes.
    redlock::client_config cfg;
    cfg.nodes = {"redis://127.0.0.1:1"};
    int node_events = 0;
    cfg.on_event = [&](const redlock::event& e) {
        if (redlock::to_string(e).starts_with("node_down ")) ++node_events;
    };
    redlock::client client(ioc.get_executor(), cfg);
    boost::system::error_code acquired_ec;
    redlock::lock_options options;
    options.ttl = std::chrono::seconds(5);
    client.async_acquire("consumer", options, [&](boost::system::error_code e, redlock::lease l) {
        acquired_ec = e;
        if (l.held()) std::cerr << "a lease from a node that is not there\n";
        client.async_close([](boost::system::error_code) {});
    });
    ioc.restart();
    ioc.run_for(std::chrono::seconds(30));
    if (acquired_ec != redlock::error::quorum_unreachable) {
        std::cerr << "expected quorum_unreachable, got " << acquired_ec.message() << "\n";
        return 1;
    }
    const auto text = client.metrics().to_prometheus();
    if (text.find("redlock_acquire_failures_total{cause=\"quorum_unreachable\"} 1\n") == std::string::npos ||
        node_events == 0) {
        std::cerr << "the metrics or events do not tell the failed acquire (" << node_events << " events):\n"
                  << text;
        return 1;
    }
    std::cout << "consumer OK: " << why << "; " << redlock::error_name(redlock::error::quorum_unreachable)
              << "\n";
    return 0;
}
