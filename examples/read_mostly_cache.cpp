// SPDX-License-Identifier: BSL-1.0
// A read-mostly cache shared by processes: a read-write lock (lock_options::mode). The cache is
// two keys on the first node, "example:cache:a" and "example:cache:b", that a writer sets one
// after the other (not atomically) to the same version; readers read one, then the other. Under
// the read lock the readers share the cache and never see a half-written version (a "torn"
// read: a and b differ); the writer, under the write lock, has it alone, and while it waits new
// readers wait behind it, so the writes go through although readers loop without a pause. With
// --no-lock the same readers see torn versions.
//
//   read_mostly_cache NODES|config.json [--name A] [--readers 4] [--writes 3] [--no-lock]
//
// Prints "<name>: <reads> reads, <writes> writes, <torn> torn"; exits 1 if a read was torn.
#include "example_support.hpp"
#include <redlock/redlock.hpp>
#include <redlock/resp/request.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {

struct settings {
    std::string name = "A";
    int readers = 4;
    int writes = 3;
    bool lock = true;
};

struct tally {
    int reads = 0;
    int torn = 0;
    int writes = 0;
    int readers_done = 0;
    bool writer_done = false;
};

asio::awaitable<void> pause(std::chrono::milliseconds d) {
    asio::steady_timer t(co_await asio::this_coro::executor, d);
    co_await t.async_wait(asio::use_awaitable);
}

asio::awaitable<std::string> get(redlock::redis::connection& store, const char* key) {
    redlock::resp::request r;
    r.push("GET", key);
    auto replies = co_await store.async_exec(r, 1s, asio::use_awaitable);
    co_return replies.front().str;
}

asio::awaitable<void> set(redlock::redis::connection& store, const char* key, const std::string& value) {
    redlock::resp::request r;
    r.push("SET", key, value);
    co_await store.async_exec(r, 1s, asio::use_awaitable);
}

// Under the lock, or not: `body` runs once.
template <class Body>
asio::awaitable<void> guarded(redlock::client& client, const settings& s, redlock::lock_mode mode,
                              Body body) {
    if (!s.lock) {
        redlock::lease none;
        co_await body(none);
        co_return;
    }
    redlock::lock_options o;
    o.ttl = 5s;
    o.wait = 60s;
    o.mode = mode;
    co_await redlock::async_with_lock(client, "example:cache", o, body, asio::use_awaitable);
}

asio::awaitable<void> reader(redlock::client& client, redlock::redis::connection& store, const settings& s,
                             tally& t) {
    // Until this process's writer is done, and a little after (other processes' writes).
    while (!t.writer_done || t.reads < 10 * s.readers) {
        co_await guarded(client, s, redlock::lock_mode::read, [&](redlock::lease&) -> asio::awaitable<void> {
            const auto a = co_await get(store, "example:cache:a");
            co_await pause(1ms);
            const auto b = co_await get(store, "example:cache:b");
            ++t.reads;
            if (a != b) ++t.torn;
        });
    }
    ++t.readers_done;
}

asio::awaitable<void> writer(redlock::client& client, redlock::redis::connection& store, const settings& s,
                             tally& t) {
    for (int i = 0; i < s.writes; ++i) {
        co_await pause(20ms);  // readers are in
        const auto version = s.name + "-" + std::to_string(i);
        co_await guarded(client, s, redlock::lock_mode::write, [&](redlock::lease&) -> asio::awaitable<void> {
            co_await set(store, "example:cache:a", version);
            co_await pause(20ms);  // half written, for 20 ms
            co_await set(store, "example:cache:b", version);
            ++t.writes;
        });
        std::printf("%s wrote %s\n", s.name.c_str(), version.c_str());
        std::fflush(stdout);
    }
    t.writer_done = true;
}

asio::awaitable<int> run_cache(redlock::client& client, redlock::redis::connection& store, settings s) {
    tally t;
    auto ex = co_await asio::this_coro::executor;
    for (int i = 0; i < s.readers; ++i)
        asio::co_spawn(ex, reader(client, store, s, t), asio::detached);
    co_await writer(client, store, s, t);
    while (t.readers_done < s.readers)
        co_await pause(10ms);
    std::printf("%s: %d reads, %d writes, %d torn\n", s.name.c_str(), t.reads, t.writes, t.torn);
    co_return t.torn == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr,
                     "usage: read_mostly_cache NODES|config.json [--name A] [--readers 4] [--writes 3] "
                     "[--no-lock]\n");
        return 2;
    }
    const auto cfg = example_config("read_mostly_cache", argv[1]);
    settings s;
    for (int i = 2; i < argc; ++i) {
        const std::string flag = argv[i];
        if (flag == "--no-lock") {
            s.lock = false;
        } else if (i + 1 < argc && flag == "--name") {
            s.name = argv[++i];
        } else if (i + 1 < argc && flag == "--readers") {
            s.readers = std::atoi(argv[++i]);
        } else if (i + 1 < argc && flag == "--writes") {
            s.writes = std::atoi(argv[++i]);
        } else {
            std::fprintf(stderr, "read_mostly_cache: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), cfg);
    auto store = open_store(ioc, cfg);
    return run_example(ioc, "read_mostly_cache", run_cache(client, *store, s));
}
