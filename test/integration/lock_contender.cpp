// SPDX-License-Identifier: BSL-1.0
// One process of the cross-process mutual exclusion test: `coroutines` coroutines each take the
// lock `rounds` times and, inside, update a counter on a separate checker server by
// read-sleep-write, with a `holders` counter that must be 1 while anyone is inside. Overlaps and
// lost updates are visible on the checker server; the exit status says whether every round ran.
//
//   lock_contender --nodes URI[,URI...] --checker URI --resource R --coroutines C --rounds K
//                  [--retry-max-ms M] [--fair 1] [--queue-timeout-ms Q] [--fenced 1] [--no-lock 1]
// --fenced 1: fenced locks; inside the critical section each holder appends its fence to the
// checker's list "fences" (so the list is in grant order), and a release that fails (a node is
// being restarted) is reported but not fatal: its keys expire. --no-lock 1: the critical
// sections without the lock, the negative control (the checker must see them overlap).
#include "support/comma_list.hpp"
#include <redlock/redis/connection.hpp>
#include <redlock/redlock.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace asio = boost::asio;
using namespace std::chrono_literals;
using boost::system::error_code;

namespace {

constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);

struct args {
    std::vector<std::string> nodes;
    std::string checker;
    std::string resource = "contended";
    int coroutines = 50;
    int rounds = 100;
    int retry_max_ms = 50;  // the timed retries; release messages wake waiters before them
    bool fair = false;
    bool fenced = false;
    bool no_lock = false;
    int queue_timeout_ms = 5000;
};

bool parse(int argc, char** argv, args& a) {
    std::map<std::string, std::string> kv;
    for (int i = 1; i + 1 < argc; i += 2)
        kv[argv[i]] = argv[i + 1];
    if (!kv.count("--nodes") || !kv.count("--checker")) return false;
    a.nodes = redlock::test::split_node_uris(kv["--nodes"]);
    a.checker = kv["--checker"];
    if (kv.count("--resource")) a.resource = kv["--resource"];
    if (kv.count("--coroutines")) a.coroutines = std::atoi(kv["--coroutines"].c_str());
    if (kv.count("--rounds")) a.rounds = std::atoi(kv["--rounds"].c_str());
    if (kv.count("--retry-max-ms")) a.retry_max_ms = std::atoi(kv["--retry-max-ms"].c_str());
    if (kv.count("--fair")) a.fair = kv["--fair"] == "1";
    if (kv.count("--fenced")) a.fenced = kv["--fenced"] == "1";
    if (kv.count("--no-lock")) a.no_lock = kv["--no-lock"] == "1";
    if (kv.count("--queue-timeout-ms")) a.queue_timeout_ms = std::atoi(kv["--queue-timeout-ms"].c_str());
    return !a.nodes.empty() && a.coroutines > 0 && a.rounds > 0 && !(a.no_lock && a.fenced);
}

struct tally {
    int done_rounds = 0;
    int failures = 0;
    int finished = 0;
    int release_failures = 0;
};

asio::awaitable<redlock::resp::value> run(redlock::redis::connection& checker, redlock::resp::request req) {
    auto [ec, replies] = co_await checker.async_exec(req, 5000ms, tuple_awaitable);
    if (ec || replies.size() != 1)
        throw boost::system::system_error(ec ? ec : redlock::error::unexpected_reply);
    co_return std::move(replies[0]);
}

asio::awaitable<void> worker(redlock::client& client, redlock::redis::connection& checker, args a, tally& t) {
    redlock::lock_options o;
    o.ttl = 10s;
    // Longer than the slowest whole run (sanitized, on few cores): of 150 waiters on a lock that
    // is not fair, an unlucky one may wait for most of it. What is checked is exclusion.
    o.wait = 240s;
    o.fair = a.fair;
    o.fenced = a.fenced;
    o.queue_timeout = std::chrono::milliseconds(a.queue_timeout_ms);
    asio::steady_timer pause(co_await asio::this_coro::executor);
    for (int i = 0; i < a.rounds; ++i) {
        redlock::diagnostics diag;
        redlock::lease lease;
        error_code ec;
        if (!a.no_lock)
            std::tie(ec, lease) = co_await client.async_acquire(a.resource, o, diag, tuple_awaitable);
        if (ec) {
            std::fprintf(stderr, "acquire failed: %s: %s\n", ec.message().c_str(), diag.message.c_str());
            ++t.failures;
            continue;
        }
        redlock::resp::request enter, read, leave;
        enter.push("INCR", "holders");
        read.push("GET", "counter");
        leave.push("DECR", "holders");
        auto holders = co_await run(checker, enter);
        if (holders.integer != 1) {
            redlock::resp::request overlap;
            overlap.push("INCR", "overlaps");
            co_await run(checker, overlap);
        }
        if (a.fenced) {
            redlock::resp::request record;
            record.push("RPUSH", "fences", std::to_string(lease.fence()));
            co_await run(checker, record);
        }
        auto seen = co_await run(checker, read);
        const long value = seen.is_null() ? 0 : std::atol(seen.str.c_str());
        pause.expires_after(200us);
        co_await pause.async_wait(tuple_awaitable);
        redlock::resp::request write;
        write.push("SET", "counter", std::to_string(value + 1));
        co_await run(checker, write);
        co_await run(checker, leave);
        error_code rec;
        if (!a.no_lock) std::tie(rec) = co_await lease.async_release(tuple_awaitable);
        if (rec) {
            std::fprintf(stderr, "release failed: %s\n", rec.message().c_str());
            ++(a.fenced ? t.release_failures : t.failures);
        }
        ++t.done_rounds;
    }
    ++t.finished;
}

}  // namespace

int main(int argc, char** argv) {
    args a;
    if (!parse(argc, argv, a)) {
        std::fprintf(
            stderr,
            "usage: lock_contender --nodes URI[,URI...] --checker URI [--resource R] [--coroutines C] "
            "[--rounds K] [--retry-max-ms M] [--fair 1] [--queue-timeout-ms Q] [--fenced 1] [--no-lock 1]\n");
        return 2;
    }
    try {
        asio::io_context ioc;
        redlock::client_config cfg;
        cfg.nodes = a.nodes;
        cfg.restart_quarantine = false;  // the test's servers start empty just before
        cfg.node_timeout = 500ms;
        cfg.retry = {std::min(5ms, std::chrono::milliseconds(a.retry_max_ms)),
                     std::chrono::milliseconds(a.retry_max_ms)};
        redlock::client client(ioc.get_executor(), cfg);
        redlock::redis::connection_config cc;
        std::string why;
        if (auto ec = redlock::redis::parse_node_uri(a.checker, cc.address, why)) {
            std::fprintf(stderr, "%s\n", why.c_str());
            return 2;
        }
        redlock::redis::connection checker(ioc.get_executor(), cc);
        checker.async_connect([](error_code) {});
        tally t;
        for (int c = 0; c < a.coroutines; ++c) {
            auto w = worker(client, checker, a, t);
            asio::co_spawn(ioc, std::move(w), [](std::exception_ptr ep) {
                if (ep) std::rethrow_exception(ep);
            });
        }
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(5);
        while (t.finished < a.coroutines && std::chrono::steady_clock::now() < deadline)
            ioc.run_one_for(100ms);
        // A release completes at a quorum; give the minority nodes' releases time to be sent and
        // answered before the process exits, or their keys would wait for their ttl.
        ioc.run_for(500ms);
        const auto m = client.metrics();
        // The test sums every process's counters on the checker server.
        bool reported = false;
        asio::co_spawn(
            ioc,
            [&]() -> asio::awaitable<void> {
                redlock::resp::request req;
                req.push("INCRBY", "attempts", m.attempts);
                req.push("INCRBY", "wakeups", m.release_wakeups);
                co_await checker.async_exec(req, 5000ms, tuple_awaitable);
                reported = true;
            },
            asio::detached);
        for (int i = 0; i < 100 && !reported; ++i)
            ioc.run_one_for(50ms);
        std::printf("rounds %d failures %d release failures %d attempts %llu contended %llu\n", t.done_rounds,
                    t.failures, t.release_failures, static_cast<unsigned long long>(m.attempts),
                    static_cast<unsigned long long>(m.contended));
        return t.done_rounds == a.coroutines * a.rounds && t.failures == 0 ? 0 : 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "lock_contender: %s\n", e.what());
        return 1;
    }
}
