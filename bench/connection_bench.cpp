// SPDX-License-Identifier: BSL-1.0
// Throughput of one pipelined connection shared by many coroutines, next to redis-benchmark
// run against the same freshly started redis-server in the same run.
//
//   connection_bench [--requests N] [--coroutines C] [--json]
//
// For each command (PING, and SET key:<random> v NX PX 30000 where every SET creates a key) it
// runs our client, then `redis-benchmark -c 50 -P 16 -r 1000000000`, and prints both rates and
// their ratio. The server is flushed before each SET run.
#include "support/redis_server.hpp"
#include <redlock/redis/connection.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <random>
#include <sstream>
#include <string>

namespace asio = boost::asio;
using clock_type = std::chrono::steady_clock;

namespace {

struct run_state {
    std::uint64_t to_start;  // requests not yet issued
    std::uint64_t errors = 0;
    int active = 0;
};

// Same key space as redis-benchmark's __rand_int__ with -r 1000000000: 12 digits, zero-padded.
void random_key(std::string& key, std::minstd_rand& rng) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "key:%012u", static_cast<unsigned>(rng() % 1000000000u));
    key = buf;
}

asio::awaitable<void> client_loop(redlock::redis::connection& conn, bool set, run_state& st, unsigned seed) {
    std::minstd_rand rng(seed);
    redlock::resp::request req;
    std::string key;
    while (st.to_start > 0) {
        --st.to_start;
        req.clear();
        if (set) {
            random_key(key, rng);
            req.push("SET", key, "v", "NX", "PX", "30000");
        } else {
            req.push("PING");
        }
        auto [ec, replies] = co_await conn.async_exec(req, asio::as_tuple(asio::use_awaitable));
        if (ec || replies.size() != 1 || replies[0].is_error()) ++st.errors;
    }
}

double run_ours(const std::string& uri, bool set, std::uint64_t requests, int coroutines) {
    asio::io_context ioc(1);
    redlock::redis::connection_config cfg;
    std::string why;
    if (redlock::redis::parse_node_uri(uri, cfg.address, why)) throw std::runtime_error(why);
    redlock::redis::connection conn(ioc.get_executor(), cfg);
    run_state st{requests};
    clock_type::time_point start;
    clock_type::time_point end;
    auto driver = [&]() -> asio::awaitable<void> {
        auto [ec] = co_await conn.async_connect(asio::as_tuple(asio::use_awaitable));
        if (ec) throw std::runtime_error("connect: " + conn.last_error().message);
        start = clock_type::now();
        st.active = coroutines;
        for (int i = 0; i < coroutines; ++i) {
            auto loop = client_loop(conn, set, st, static_cast<unsigned>(i + 1) * 7919u);
            asio::co_spawn(ioc, std::move(loop), [&](std::exception_ptr ep) {
                if (ep) std::rethrow_exception(ep);
                if (--st.active == 0) {
                    end = clock_type::now();
                    conn.close();
                }
            });
        }
    };
    asio::co_spawn(ioc, driver(), [](std::exception_ptr ep) {
        if (ep) std::rethrow_exception(ep);
    });
    ioc.run();
    if (st.errors) throw std::runtime_error(std::to_string(st.errors) + " requests failed");
    return static_cast<double>(requests) / std::chrono::duration<double>(end - start).count();
}

double run_redis_benchmark(unsigned short port, const std::string& command, std::uint64_t requests) {
    std::ostringstream cmd;
    cmd << "redis-benchmark -h 127.0.0.1 -p " << port << " -c 50 -P 16 -r 1000000000 -n " << requests
        << " --csv " << command << " 2>/dev/null";
    std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.str().c_str(), "r"), pclose);
    if (!pipe) throw std::runtime_error("cannot run redis-benchmark");
    std::string last, line;
    char buf[512];
    while (std::fgets(buf, sizeof buf, pipe.get())) {
        line = buf;
        if (line.find("\"rps\"") == std::string::npos && line.find(',') != std::string::npos) last = line;
    }
    // "<test>","<rps>",...
    auto first = last.find("\",\"");
    if (first == std::string::npos) throw std::runtime_error("unexpected redis-benchmark output: " + last);
    return std::strtod(last.c_str() + first + 3, nullptr);
}

}  // namespace

int main(int argc, char** argv) {
    std::uint64_t requests = 2000000;
    // As many requests in flight as redis-benchmark -c 50 -P 16 keeps: 50 connections x 16.
    int coroutines = 800;
    bool json = false;
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        if (arg == "--json") {
            json = true;
        } else if (arg == "--requests" && i + 1 < argc) {
            requests = std::strtoull(argv[++i], nullptr, 10);
        } else if (arg == "--coroutines" && i + 1 < argc) {
            coroutines = std::atoi(argv[++i]);
        } else {
            std::cerr << "usage: connection_bench [--requests N] [--coroutines C] [--json]\n";
            return 2;
        }
    }
    if (requests == 0 || coroutines <= 0) {
        std::cerr << "connection_bench: --requests and --coroutines must be positive\n";
        return 2;
    }
    try {
        redlock::test::redis_server server;
        struct bench_case {
            const char* name;
            bool set;
            const char* redis_benchmark_command;
        };
        const bench_case cases[] = {
            {"PING", false, "PING"},
            {"SET key:__rand_int__ v NX PX 30000", true, "SET key:__rand_int__ v NX PX 30000"}};
        nlohmann::json report = {{"requests", requests},
                                 {"coroutines", coroutines},
                                 {"connections", 1},
                                 {"redis_benchmark_args", "-c 50 -P 16 -r 1000000000"},
                                 {"results", nlohmann::json::array()}};
        for (const auto& c : cases) {
            if (c.set) server.command({"FLUSHALL"});
            double ours = run_ours(server.uri(), c.set, requests, coroutines);
            std::int64_t keys_after_ours = server.command({"DBSIZE"}).integer;
            if (c.set) server.command({"FLUSHALL"});
            double theirs = run_redis_benchmark(server.port(), c.redis_benchmark_command, requests);
            double ratio = theirs > 0 ? ours / theirs : 0.0;
            report["results"].push_back({{"command", c.name},
                                         {"redlock_ops_per_s", ours},
                                         {"redis_benchmark_ops_per_s", theirs},
                                         {"ratio", ratio},
                                         {"keys_created_by_redlock", keys_after_ours}});
            if (!json) {
                std::printf("%-36s redlock %10.0f/s   redis-benchmark %10.0f/s   ratio %.2f\n", c.name, ours,
                            theirs, ratio);
            }
        }
        if (json) std::cout << report.dump(2) << "\n";
    } catch (const std::exception& e) {
        std::cerr << "connection_bench: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
