// SPDX-License-Identifier: BSL-1.0
// The workers of the lock demo: one process's coroutines contending for one resource, printing
// every grant (validity left, one letter per node) and every failure (the error's name and the
// diagnostics, which name the nodes). Shared by examples/lock_demo and `redlock demo`.
#ifndef REDLOCK_EXAMPLES_LOCK_DEMO_WORKERS_HPP
#define REDLOCK_EXAMPLES_LOCK_DEMO_WORKERS_HPP

#include <redlock/redlock.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

namespace lock_demo {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

struct settings {
    std::vector<std::string> nodes;
    std::string name = "A";
    std::string resource = "demo:printer";
    int workers = 4;
    int seconds = 10;
    // Off only for servers started empty a moment ago (scripts/demo): see client_config.
    bool restart_quarantine = true;
    bool json = false;  // the closing metrics as one JSON line instead of a table
};

// One letter per node, in config order: G granted, D denied, X failed, . no answer yet.
inline std::string node_letters(const redlock::diagnostics& diag) {
    std::string s;
    for (const auto& n : diag.nodes) {
        switch (n.result) {
            case redlock::node_outcome::verdict::granted:
                s += 'G';
                break;
            case redlock::node_outcome::verdict::denied:
                s += 'D';
                break;
            case redlock::node_outcome::verdict::failed:
                s += 'X';
                break;
            case redlock::node_outcome::verdict::pending:
                s += '.';
                break;
        }
    }
    return s;
}

inline double since(clock_type::time_point start) {
    return std::chrono::duration<double>(clock_type::now() - start).count();
}

inline asio::awaitable<void> worker(redlock::client& client, settings s, int id, clock_type::time_point start,
                                    int& finished) {
    std::mt19937 rng(std::random_device{}());
    std::uniform_int_distribution<int> hold_ms(100, 300), rest_ms(0, 100);
    asio::steady_timer timer(co_await asio::this_coro::executor);
    redlock::lock_options o;
    o.ttl = 2s;
    o.wait = 1s;
    const auto until = start + std::chrono::seconds(s.seconds);
    while (clock_type::now() < until) {
        redlock::diagnostics diag;
        auto [ec, lease] =
            co_await client.async_acquire(s.resource, o, diag, asio::as_tuple(asio::use_awaitable));
        if (ec) {
            std::printf("%6.2fs [%s w%d] %-18s %s\n", since(start), s.name.c_str(), id,
                        ec.category() == redlock::error_category()
                            ? redlock::error_name(static_cast<redlock::error>(ec.value()))
                            : ec.message().c_str(),
                        diag.message.c_str());
            std::fflush(stdout);
            timer.expires_after(500ms);
            co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
            continue;
        }
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(lease.remaining());
        std::printf(
            "%6.2fs [%s w%d] granted            validity left %4lld ms, nodes %s (%u of %zu granted)\n",
            since(start), s.name.c_str(), id, static_cast<long long>(left.count()),
            node_letters(diag).c_str(), lease.nodes_granted(), client.node_count());
        std::fflush(stdout);
        timer.expires_after(std::chrono::milliseconds(hold_ms(rng)));
        co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
        auto [rec] = co_await lease.async_release(asio::as_tuple(asio::use_awaitable));
        if (rec)
            std::printf("%6.2fs [%s w%d] release: %s\n", since(start), s.name.c_str(), id,
                        rec.message().c_str());
        timer.expires_after(std::chrono::milliseconds(rest_ms(rng)));
        co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
    }
    ++finished;
}

// The totals, and a line per node: whether it votes (with the quarantine's time left), its
// timeouts and other errors, and its last error, short. With s.json: the metrics as JSON.
inline void print_totals(const settings& s, const redlock::metrics_snapshot& m) {
    const auto ms = [](std::chrono::microseconds us) { return static_cast<double>(us.count()) / 1000.0; };
    std::printf(
        "[%s] done: %llu grants, %llu quorum_unreachable, %llu wait_timeout, %llu attempts; "
        "acquire p50 %.1f ms, p99 %.1f ms\n",
        s.name.c_str(), static_cast<unsigned long long>(m.acquired),
        static_cast<unsigned long long>(m.failed_quorum_unreachable),
        static_cast<unsigned long long>(m.failed_wait_timeout), static_cast<unsigned long long>(m.attempts),
        ms(m.acquire_latency.quantile(0.5)), ms(m.acquire_latency.quantile(0.99)));
    if (s.json) {
        std::printf("[%s] metrics %s\n", s.name.c_str(), m.to_json().c_str());
        return;
    }
    std::printf("[%s]   %-28s %-12s %8s %7s  %s\n", s.name.c_str(), "node", "votes", "timeouts", "errors",
                "last error");
    for (const auto& n : m.nodes) {
        char votes[32];
        if (n.voting)
            std::snprintf(votes, sizeof votes, "yes");
        else if (n.quarantine_left_ms > 0)
            std::snprintf(votes, sizeof votes, "in %.0f s",
                          static_cast<double>(n.quarantine_left_ms) / 1000.0);
        else
            std::snprintf(votes, sizeof votes, "no");
        const bool cut = n.last_error.size() > 60;  // the rest is in --json
        std::printf("[%s]   %-28.28s %-12s %8llu %7llu  %.*s%s\n", s.name.c_str(), n.node.c_str(), votes,
                    static_cast<unsigned long long>(n.timeouts), static_cast<unsigned long long>(n.errors),
                    cut ? 57 : 60, n.last_error.c_str(), cut ? "..." : "");
    }
}

/// Runs the workers of one process to the end and prints the totals; the exit status.
inline int run(const settings& s) {
    try {
        asio::io_context ioc;
        redlock::client_config cfg;
        cfg.nodes = s.nodes;
        cfg.restart_quarantine = s.restart_quarantine;
        redlock::client client(ioc.get_executor(), cfg);
        const auto start = clock_type::now();
        int finished = 0;
        for (int i = 1; i <= s.workers; ++i) {
            auto w = worker(client, s, i, start, finished);
            asio::co_spawn(ioc, std::move(w), [&](std::exception_ptr ep) {
                if (ep) std::rethrow_exception(ep);
                if (finished == s.workers) ioc.stop();
            });
        }
        ioc.run();
        print_totals(s, client.metrics());
        return 0;
    } catch (const boost::system::system_error& e) {
        std::fprintf(stderr, "lock demo: %s\n", e.what());
        return 2;
    }
}

}  // namespace lock_demo

#endif
