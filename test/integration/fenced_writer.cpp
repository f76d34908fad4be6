// SPDX-License-Identifier: BSL-1.0
// A holder of a fenced lock that writes to a protected key on a checker server, then waits to
// be told to write again: the fencing test pauses it (SIGSTOP) past its lease in between, lets
// another holder write with a higher fence, and checks that the late write is refused.
//
//   fenced_writer --nodes URI[,URI...] --checker URI --resource R --ttl-ms T
//
// On the checker: writes "protected" (fence at "protected:fence") with the value "first", sets
// "writer:ready" to its fence, polls "writer:go", writes "late", and puts the error name of that
// write ("ok" if it succeeded) into "writer:result". Exit status 0 when every step ran.
#include <redlock/redis/connection.hpp>
#include <redlock/redlock.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

namespace asio = boost::asio;
using namespace std::chrono_literals;
using boost::system::error_code;

namespace {

constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);

redlock::resp::request command(const std::string& name, const std::string& key,
                               const std::string& value = {}) {
    redlock::resp::request req;
    if (value.empty()) {
        req.push(name, key);
    } else {
        req.push(name, key, value);
    }
    return req;
}

// GCC 12 cannot keep braced temporaries alive across co_await: requests are built first.
asio::awaitable<redlock::resp::value> run(redlock::redis::connection& c, redlock::resp::request req) {
    auto [ec, replies] = co_await c.async_exec(req, 5000ms, tuple_awaitable);
    if (ec || replies.size() != 1)
        throw boost::system::system_error(ec ? ec : redlock::error::unexpected_reply);
    co_return std::move(replies[0]);
}

std::string outcome(error_code ec) {
    return ec ? (ec.category() == redlock::error_category()
                     ? redlock::error_name(static_cast<redlock::error>(ec.value()))
                     : ec.message())
              : "ok";
}

asio::awaitable<int> writer(redlock::client& client, redlock::redis::connection& checker,
                            std::string resource, std::chrono::milliseconds ttl) {
    redlock::lock_options o;
    o.ttl = ttl;
    o.fenced = true;
    auto [ec, lease] = co_await client.async_acquire(resource, o, tuple_awaitable);
    if (ec) {
        std::fprintf(stderr, "fenced_writer: acquire: %s\n", ec.message().c_str());
        co_return 1;
    }
    auto [first] = co_await redlock::async_fenced_set(checker, "protected", "protected:fence", lease.fence(),
                                                      "first", 5000ms, tuple_awaitable);
    if (first) {
        std::fprintf(stderr, "fenced_writer: first write: %s\n", first.message().c_str());
        co_return 1;
    }
    auto ready = command("SET", "writer:ready", std::to_string(lease.fence()));
    co_await run(checker, std::move(ready));
    asio::steady_timer poll(co_await asio::this_coro::executor);
    for (int i = 0; i < 3000; ++i) {  // at most a minute
        auto poll_go = command("GET", "writer:go");
        auto go = co_await run(checker, std::move(poll_go));
        if (!go.is_null()) {
            auto [late] = co_await redlock::async_fenced_set(checker, "protected", "protected:fence",
                                                             lease.fence(), "late", 5000ms, tuple_awaitable);
            auto result = command("SET", "writer:result", outcome(late));
            co_await run(checker, std::move(result));
            co_return 0;
        }
        poll.expires_after(20ms);
        co_await poll.async_wait(tuple_awaitable);
    }
    std::fprintf(stderr, "fenced_writer: never told to write again\n");
    co_return 1;
}

}  // namespace

int main(int argc, char** argv) {
    std::map<std::string, std::string> kv;
    for (int i = 1; i + 1 < argc; i += 2)
        kv[argv[i]] = argv[i + 1];
    if (!kv.count("--nodes") || !kv.count("--checker") || !kv.count("--resource") || !kv.count("--ttl-ms")) {
        std::fprintf(stderr,
                     "usage: fenced_writer --nodes URI[,URI...] --checker URI --resource R --ttl-ms T\n");
        return 2;
    }
    try {
        asio::io_context ioc;
        redlock::client_config cfg;
        for (std::size_t start = 0; start <= kv["--nodes"].size();) {
            const auto& list = kv["--nodes"];
            auto comma = std::min(list.find(',', start), list.size());
            cfg.nodes.push_back(list.substr(start, comma - start));
            start = comma + 1;
        }
        cfg.node_timeout = 500ms;
        cfg.restart_quarantine = false;  // the test's servers start empty just before
        redlock::client client(ioc.get_executor(), cfg);
        redlock::redis::connection_config cc;
        std::string why;
        if (auto ec = redlock::redis::parse_node_uri(kv["--checker"], cc.address, why)) {
            std::fprintf(stderr, "%s\n", why.c_str());
            return 2;
        }
        redlock::redis::connection checker(ioc.get_executor(), cc);
        checker.async_connect([](error_code) {});
        int status = 1;
        bool done = false;
        asio::co_spawn(ioc,
                       writer(client, checker, kv["--resource"],
                              std::chrono::milliseconds(std::atoi(kv["--ttl-ms"].c_str()))),
                       [&](std::exception_ptr ep, int s) {
                           done = true;
                           status = ep ? 1 : s;
                       });
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(2);
        while (!done && std::chrono::steady_clock::now() < deadline)
            ioc.run_one_for(100ms);
        return done ? status : 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "fenced_writer: %s\n", e.what());
        return 1;
    }
}
