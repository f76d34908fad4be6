// SPDX-License-Identifier: BSL-1.0
// Leader election for a periodic job across processes. Every process runs this loop: wait for
// the "example:leader" lock; while it holds it (a watchdog keeps the lease), it is the leader
// and runs the job every 100 ms for one term, then steps down so another process gets a turn.
// The job appends "<name> <fence>" to a list on the first node: the fence tells the terms apart.
//
//   leader_election NODES|config.json [--name A] [--seconds 3] [--term-ms 400]
#include "example_support.hpp"
#include <redlock/redlock.hpp>
#include <redlock/resp/request.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

namespace asio = boost::asio;
using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

namespace {

struct settings {
    std::string name = "A";
    std::chrono::seconds run_for{3};
    std::chrono::milliseconds term{400};
};

asio::awaitable<void> sleep_for(clock_type::duration d) {
    asio::steady_timer t(co_await asio::this_coro::executor, d);
    co_await t.async_wait(asio::as_tuple(asio::use_awaitable));
}

asio::awaitable<int> campaign(redlock::client& client, redlock::redis::connection& store, settings s) {
    redlock::lock_options o;
    o.ttl = 1s;
    o.wait = 1s;  // followers wait for the leader to step down (woken by its release)
    o.fenced = true;
    std::mt19937 rng(std::random_device{}());
    int terms = 0, runs = 0;
    const auto until = clock_type::now() + s.run_for;
    while (clock_type::now() < until) {
        auto lead = [&](redlock::lease& lease) -> asio::awaitable<int> {
            std::printf("%s leads (fence %llu)\n", s.name.c_str(),
                        static_cast<unsigned long long>(lease.fence()));
            std::fflush(stdout);
            int done = 0;
            for (auto end = clock_type::now() + s.term; clock_type::now() < end; ++done) {
                redlock::resp::request job;
                job.push("RPUSH", "example:leader:log", s.name + " " + std::to_string(lease.fence()));
                co_await store.async_exec(job, 1s, asio::use_awaitable);
                co_await sleep_for(100ms);
            }
            co_return done;
        };
        try {
            runs += co_await redlock::async_with_lock(client, "example:leader", o, lead, asio::use_awaitable);
            ++terms;
        } catch (const boost::system::system_error& e) {
            if (e.code() != redlock::error::wait_timeout) throw;  // a follower that waited a whole term
        }
        co_await sleep_for(std::chrono::milliseconds(std::uniform_int_distribution<int>(10, 60)(rng)));
    }
    std::printf("%s: %d terms, %d job runs\n", s.name.c_str(), terms, runs);
    co_return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr,
                     "usage: leader_election NODES|config.json [--name A] [--seconds 3] [--term-ms 400]\n");
        return 2;
    }
    const auto cfg = example_config("leader_election", argv[1]);
    settings s;
    for (int i = 2; i + 1 < argc; i += 2) {
        const std::string flag = argv[i];
        if (flag == "--name") {
            s.name = argv[i + 1];
        } else if (flag == "--seconds") {
            s.run_for = std::chrono::seconds(std::atoi(argv[i + 1]));
        } else if (flag == "--term-ms") {
            s.term = std::chrono::milliseconds(std::atoi(argv[i + 1]));
        } else {
            std::fprintf(stderr, "leader_election: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), cfg);
    auto store = open_store(ioc, cfg);
    return run_example(ioc, "leader_election", campaign(client, *store, s));
}
