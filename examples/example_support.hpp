// SPDX-License-Identifier: BSL-1.0
// What the examples share: their nodes come as "URI,URI,..." or as the path of a client_config
// JSON file (see docs/locks.md), e.g. one that turns the restart quarantine off for servers
// started a moment ago; their main coroutine returns the exit status.
#ifndef REDLOCK_EXAMPLES_EXAMPLE_SUPPORT_HPP
#define REDLOCK_EXAMPLES_EXAMPLE_SUPPORT_HPP

#include <redlock/config.hpp>
#include <redlock/redis/connection.hpp>
#include <redlock/redis/node_address.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>
#include <vector>

/// "a,,b," -> {"a", "b"}.
inline std::vector<std::string> split_list(const std::string& s) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start < s.size()) {
        auto comma = s.find(',', start);
        if (comma == std::string::npos) comma = s.size();
        if (comma > start) out.push_back(s.substr(start, comma - start));
        start = comma + 1;
    }
    return out;
}

inline redlock::client_config example_config(const char* program, const char* arg) {
    const std::string text = arg != nullptr ? arg : "redis://127.0.0.1:6379";
    redlock::client_config cfg;
    boost::system::error_code ec;
    std::string why;
    if (text.ends_with(".json")) {
        cfg = redlock::client_config::from_file(text, ec, why);
    } else {
        cfg.nodes = split_list(text);
        ec = cfg.validate(why);
    }
    if (ec) {
        std::fprintf(stderr, "%s: %s\n", program, why.c_str());
        std::exit(2);
    }
    return cfg;
}

/// A connection to the first node, where the examples keep the data their locks protect.
inline std::unique_ptr<redlock::redis::connection> open_store(boost::asio::io_context& ioc,
                                                              const redlock::client_config& cfg) {
    redlock::redis::connection_config store_cfg;
    std::string why;
    if (redlock::redis::parse_node_uri(cfg.nodes.front(), store_cfg.address, why)) std::exit(2);  // validated
    auto store = std::make_unique<redlock::redis::connection>(ioc.get_executor(), store_cfg);
    store->async_connect([](boost::system::error_code) {});
    return store;
}

/// Runs `main_coroutine` on `ioc` and returns its result, or 1 if it threw (the exception is
/// printed). Stops `ioc` when it ends: the clients' connections would keep it running.
inline int run_example(boost::asio::io_context& ioc, const char* program,
                       boost::asio::awaitable<int> main_coroutine) {
    int status = 1;
    boost::asio::co_spawn(ioc, std::move(main_coroutine), [&](std::exception_ptr ep, int result) {
        if (ep) {
            try {
                std::rethrow_exception(ep);
            } catch (const std::exception& e) {
                std::fprintf(stderr, "%s: %s\n", program, e.what());
            }
        } else {
            status = result;
        }
        ioc.stop();
    });
    ioc.run();
    return status;
}

#endif
