// SPDX-License-Identifier: BSL-1.0
// A limit on concurrent jobs across processes: a semaphore (lock_options::permits). Each process
// runs its jobs through async_with_lock on "example:jobs" with `--permits K`: at most K jobs run
// at once, whichever processes they are in; the others wait for a permit (woken by a release).
// A permit is a lease kept by the watchdog, so a crashed process's permit comes back after its
// ttl. Exactly K on one master; over N > 1 masters up to floor(K * N / quorum) (docs/safety.md). Each job
// counts itself in on the first node (INCR "example:jobs:running") and logs the count it saw to
// "example:jobs:log": never above K.
//
//   job_limit NODES|config.json [--name A] [--jobs 5] [--permits 2] [--job-ms 50]
#include "example_support.hpp"
#include <redlock/redlock.hpp>
#include <redlock/resp/request.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {

struct settings {
    std::string name = "A";
    int jobs = 5;
    int permits = 2;
    std::chrono::milliseconds job_time{50};
};

asio::awaitable<std::int64_t> count(redlock::redis::connection& store, const char* command) {
    redlock::resp::request r;
    r.push(command, "example:jobs:running");
    auto replies = co_await store.async_exec(r, 1s, asio::use_awaitable);
    co_return replies.front().integer;
}

asio::awaitable<int> run_jobs(redlock::client& client, redlock::redis::connection& store, settings s) {
    redlock::lock_options o;
    o.ttl = 2s;
    o.wait = 60s;
    o.permits = s.permits;
    int most = 0;
    for (int job = 0; job < s.jobs; ++job) {
        auto body = [&](redlock::lease&) -> asio::awaitable<std::int64_t> {
            const auto running = co_await count(store, "INCR");
            redlock::resp::request log;
            log.push("RPUSH", "example:jobs:log", std::to_string(running));
            co_await store.async_exec(log, 1s, asio::use_awaitable);
            std::printf("%s job %d: %lld running\n", s.name.c_str(), job, static_cast<long long>(running));
            std::fflush(stdout);
            asio::steady_timer work(co_await asio::this_coro::executor, s.job_time);
            co_await work.async_wait(asio::use_awaitable);
            co_await count(store, "DECR");
            co_return running;
        };
        const auto running =
            co_await redlock::async_with_lock(client, "example:jobs", o, body, asio::use_awaitable);
        most = std::max(most, static_cast<int>(running));
    }
    std::printf("%s: %d jobs, at most %d running at once (limit %d)\n", s.name.c_str(), s.jobs, most,
                s.permits);
    co_return most <= s.permits ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(
            stderr, "usage: job_limit NODES|config.json [--name A] [--jobs 5] [--permits 2] [--job-ms 50]\n");
        return 2;
    }
    const auto cfg = example_config("job_limit", argv[1]);
    settings s;
    for (int i = 2; i + 1 < argc; i += 2) {
        const std::string flag = argv[i];
        if (flag == "--name") {
            s.name = argv[i + 1];
        } else if (flag == "--jobs") {
            s.jobs = std::atoi(argv[i + 1]);
        } else if (flag == "--permits") {
            s.permits = std::atoi(argv[i + 1]);
        } else if (flag == "--job-ms") {
            s.job_time = std::chrono::milliseconds(std::atoi(argv[i + 1]));
        } else {
            std::fprintf(stderr, "job_limit: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), cfg);
    auto store = open_store(ioc, cfg);
    return run_example(ioc, "job_limit", run_jobs(client, *store, s));
}
