// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_TEST_SUPPORT_LOCK_HELPERS_HPP
#define REDLOCK_TEST_SUPPORT_LOCK_HELPERS_HPP

#include "support/bookkeeping_keys.hpp"
#include "support/redis_server.hpp"
#include "support/tcp_proxy.hpp"
#include <redlock/client.hpp>
#include <redlock/config.hpp>
#include <redlock/diagnostics.hpp>
#include <redlock/lease.hpp>
#include <redlock/lock_options.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/error_code.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace redlock::test {

using server_list = std::vector<std::unique_ptr<redis_server>>;

/// A config for the given servers with timeouts that tolerate a loaded 2-core test machine;
/// tests of timeouts set their own.
inline client_config lock_config(const server_list& servers) {
    client_config cfg;
    for (const auto& s : servers)
        cfg.nodes.push_back(s->uri());
    cfg.node_timeout = std::chrono::milliseconds(500);
    cfg.connect_timeout = std::chrono::milliseconds(1000);
    cfg.retry = {std::chrono::milliseconds(5), std::chrono::milliseconds(20)};
    // The fixture's servers start empty a moment before the test: they have lost no lock, and
    // a quarantine of max_ttl would stall every test (quarantine_test turns it on).
    cfg.restart_quarantine = false;
    return cfg;
}

/// One node, reached through `proxy`, with the library's default timeouts; a fresh server (see
/// lock_config).
inline client_config through(const tcp_proxy& proxy) {
    client_config cfg;
    cfg.nodes = {proxy.uri()};
    cfg.restart_quarantine = false;
    return cfg;
}

/// One proxy per server, and lock_config's config for the servers reached through them.
struct proxied_servers {
    std::vector<std::unique_ptr<tcp_proxy>> proxies;
    client_config config;
};
inline proxied_servers through_proxies(const server_list& servers) {
    proxied_servers p;
    p.config = lock_config(servers);
    p.config.nodes.clear();
    for (const auto& s : servers) {
        p.proxies.push_back(std::make_unique<tcp_proxy>(s->port()));
        p.config.nodes.push_back(p.proxies.back()->uri());
    }
    return p;
}

/// Whether every proxy has accepted exactly `connections` connections.
inline bool accepted_everywhere(const std::vector<std::unique_ptr<tcp_proxy>>& proxies,
                                std::size_t connections) {
    return std::all_of(proxies.begin(), proxies.end(),
                       [&](const auto& p) { return p->accepted() == connections; });
}

/// The servers' URIs, comma-separated, for a child process's --nodes.
inline std::string node_uris(const server_list& servers) {
    std::string uris;
    for (const auto& s : servers)
        uris += (uris.empty() ? "" : ",") + s->uri();
    return uris;
}

/// The hash tag of `resource`'s keys with the default prefix: "{redlock:<resource>}".
inline std::string key_tag(const std::string& resource) {
    return "{redlock:" + resource + "}";
}

/// The lock key of `resource` with the default prefix.
inline std::string lock_key(const std::string& resource) {
    return key_tag(resource) + ":lock";
}

/// The largest max_ttl (ms) any client recorded on one server, with the default prefix; empty
/// when none did.
inline std::string recorded_max_ttl(const redis_server& s) {
    return s.command({"GET", "{redlock:}:max_ttl"}).str;
}

/// Waiters in `resource`'s fair queue on one server.
inline std::int64_t queued(const redis_server& s, const std::string& resource) {
    return s.command({"ZCARD", key_tag(resource) + ":queue"}).integer;
}

/// Whether every server queues exactly `n` waiters of `resource`.
inline bool queued_everywhere(const server_list& servers, const std::string& resource, std::int64_t n) {
    for (const auto& s : servers)
        if (queued(*s, resource) != n) return false;
    return true;
}

/// The value of the lock key on one server: empty when there is none.
inline std::string holder_on(const redis_server& s, const std::string& resource) {
    return s.command({"GET", lock_key(resource)}).str;
}

/// How long the server has run (INFO server's uptime_in_seconds); zero if it does not say.
inline std::chrono::seconds uptime(const redis_server& s) {
    const auto text = s.command({"INFO", "server"}).str;
    const auto at = text.find("uptime_in_seconds:");
    if (at == std::string::npos) return std::chrono::seconds(0);
    return std::chrono::seconds(std::stoll(text.substr(at + std::string_view("uptime_in_seconds:").size())));
}

/// Makes `resource`'s lock key one that `master` holds and its replicas never got, as when a
/// grant is lost to asynchronous replication: deleted everywhere, then written again on the
/// master alone (a script's REPL_NONE) as it was, whatever its type (DUMP, RESTORE with its
/// ttl). Renewals then reach the replicas as PEXPIREs of a key they lack, which do nothing.
/// Returns the key's ttl in ms, -2 for none (or none left).
inline std::int64_t unreplicate(const redis_server& master, const std::string& resource) {
    const auto reply =
        master.command({"EVAL",
                        "local t = redis.call('PTTL', KEYS[1]); if t <= 0 then return -2 end; "
                        "local d = redis.call('DUMP', KEYS[1]); redis.call('DEL', KEYS[1]); "
                        "redis.set_repl(redis.REPL_NONE); redis.call('RESTORE', KEYS[1], t, d); return t",
                        "1", lock_key(resource)});
    return reply.integer;
}

/// Whether the lock key of `resource` exists on one server.
inline bool key_exists(const redis_server& s, const std::string& resource) {
    return s.command({"EXISTS", lock_key(resource)}).integer != 0;
}

inline bool no_key_anywhere(const server_list& servers, const std::string& resource) {
    for (const auto& s : servers) {
        if (key_exists(*s, resource)) return false;
    }
    return true;
}

/// Whether neither the lock key of `resource` nor any of its keys "{...}:<suffix>" (a semaphore's
/// "permits", a read-write lock's "rw" and "rw:waiting") is left on any server.
inline bool no_keys_anywhere(const server_list& servers, const std::string& resource,
                             std::initializer_list<std::string_view> suffixes) {
    for (const auto& s : servers)
        for (auto suffix : suffixes)
            if (s->command({"EXISTS", key_tag(resource) + ":" + std::string(suffix)}).integer != 0)
                return false;
    return no_key_anywhere(servers, resource);
}

/// Whether the lock key of `resource` is a sorted set of `n` holds (a semaphore's permits, a
/// read-write lock's holds; expired ones too, until a script drops them) on every server. A
/// semaphore's count is a member too, "#permits" scored -K: scores below 0 are not holds.
inline bool members_everywhere(const server_list& servers, const std::string& resource, std::int64_t n) {
    for (const auto& s : servers)
        if (s->command({"ZCOUNT", lock_key(resource), "0", "+inf"}).integer != n) return false;
    return true;
}

/// How many servers hold `token` in the lock key of `resource`. None for an empty token: a
/// server without the key is not one that holds it.
inline std::size_t nodes_holding(const server_list& servers, const std::string& resource,
                                 const std::string& token) {
    if (token.empty()) return 0;
    std::size_t n = 0;
    for (const auto& s : servers)
        n += holder_on(*s, resource) == token ? 1 : 0;
    return n;
}

/// How many nodes the diagnostics of an operation name as granted.
inline std::size_t granted_in(const diagnostics& diag) {
    return static_cast<std::size_t>(
        std::count_if(diag.nodes.begin(), diag.nodes.end(),
                      [](const node_outcome& o) { return o.result == node_outcome::verdict::granted; }));
}

/// Whether `holder`'s grant has reached every node, not only the quorum that answered first. A
/// waiter that starts before may be granted a node the holder has not reached yet: its rounds
/// are then split (it retries soon), and a fair waiter's split rounds leave that node without
/// a hand-off.
inline bool held_everywhere(const server_list& servers, const std::string& resource, const lease& holder) {
    return nodes_holding(servers, resource, holder.token()) == servers.size();
}

/// Resource names for client::async_acquire_all. GCC 12 cannot compile a braced list inside a
/// co_await expression ("array used as initializer"), so tests pass this instead.
template <class... Names>
std::vector<std::string> names(const Names&... n) {
    return {std::string(n)...};
}

inline lock_options options(std::chrono::milliseconds ttl = std::chrono::seconds(10),
                            std::chrono::milliseconds wait = std::chrono::milliseconds(0)) {
    lock_options o;
    o.ttl = ttl;
    o.wait = wait;
    return o;
}

/// What a lease's check, extend (by 5 s) and release answer, one after another.
struct check_extend_release_answers {
    boost::system::error_code check, extend, release;
};
inline boost::asio::awaitable<check_extend_release_answers> check_extend_release(redlock::lease& l) {
    check_extend_release_answers a;
    auto tuple = boost::asio::as_tuple(boost::asio::use_awaitable);
    std::tie(a.check) = co_await l.async_check(tuple);
    std::tie(a.extend) = co_await l.async_extend(std::chrono::seconds(5), tuple);
    std::tie(a.release) = co_await l.async_release(tuple);
    co_return a;
}

inline boost::asio::awaitable<void> sleep_for(std::chrono::steady_clock::duration d) {
    boost::asio::steady_timer t(co_await boost::asio::this_coro::executor, d);
    co_await t.async_wait(boost::asio::use_awaitable);
}

/// An acquire left to run while the test goes on: `result` and `lease` are set when it
/// completes. It must outlive the acquire.
struct background_acquire {
    std::optional<boost::system::error_code> result;
    std::optional<redlock::lease> lease;

    void start(client& c, std::string_view resource, const lock_options& o) {
        c.async_acquire(resource, o, [this](boost::system::error_code ec, redlock::lease l) {
            result = ec;
            lease.emplace(std::move(l));
        });
    }
    /// With diagnostics, which must outlive the acquire too.
    void start(client& c, std::string_view resource, const lock_options& o, diagnostics& diag) {
        c.async_acquire(resource, o, diag, [this](boost::system::error_code ec, redlock::lease l) {
            result = ec;
            lease.emplace(std::move(l));
        });
    }
};

/// Whether `c` has made `rounds` acquire rounds or more and every one of them found the resource
/// held: none is on its way, so a release from now on reaches a waiter of `c` by its message
/// (or its timer), not by a round that a subscription set off and that passes the release.
inline bool rounds_all_found_held(const client& c, std::uint64_t rounds) {
    const auto m = c.metrics();
    return m.attempts >= rounds && m.attempts == m.contended;
}

/// How often a server ran `command` so far (lower case, as INFO commandstats names it; the calls
/// scripts make count too): also a fault test's proof that a request it held back did run.
inline std::uint64_t command_calls(const redis_server& s, const std::string& command) {
    const std::string info = s.command({"INFO", "commandstats"}).str;
    const std::string tag = "cmdstat_" + command + ":calls=";
    const auto at = info.find(tag);
    return at == std::string::npos ? 0 : std::stoull(info.substr(at + tag.size()));
}

/// Resumes the paused `server` after `d`, from a coroutine of its own: the caller goes on.
inline boost::asio::awaitable<void> resume_after(redis_server& server, std::chrono::milliseconds d) {
    boost::asio::co_spawn(
        co_await boost::asio::this_coro::executor,
        [&server, d]() -> boost::asio::awaitable<void> {
            co_await sleep_for(d);
            server.resume();
        },
        boost::asio::detached);
}

/// Polls `condition` every 10 ms while the io_context keeps running, for background work such
/// as the release of a dropped lease. Returns whether it became true within `limit`.
inline boost::asio::awaitable<bool> eventually(std::function<bool()> condition,
                                               std::chrono::milliseconds limit = std::chrono::seconds(5)) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!condition()) {
        if (std::chrono::steady_clock::now() >= deadline) co_return false;
        co_await sleep_for(std::chrono::milliseconds(10));
    }
    co_return true;
}

/// Tries `rival` on `resource` every 200 ms until it is granted (and releases that grant), and
/// returns how long after `holder`'s validity ended the grant came: negative, a second holder
/// while the holder still counted its lease valid. The holder's validity is read after each
/// try, so a renewal that moved it counts.
inline boost::asio::awaitable<std::chrono::milliseconds> rival_granted_after_holder(
    client& rival, const std::string& resource, const lock_options& o, const lease& holder) {
    for (;;) {
        auto [ec, got] =
            co_await rival.async_acquire(resource, o, boost::asio::as_tuple(boost::asio::use_awaitable));
        const auto holder_valid_until = holder.valid_until();
        if (!ec) {
            const auto granted_at = std::chrono::steady_clock::now();
            co_await got.async_release(boost::asio::use_awaitable);
            co_return std::chrono::duration_cast<std::chrono::milliseconds>(granted_at - holder_valid_until);
        }
        co_await sleep_for(std::chrono::milliseconds(200));
    }
}

/// Takes and releases the lock "warm" and waits until every server ran both: `c` is then
/// connected to all of them with its scripts loaded, so that only a test's own commands meet its
/// faults. A quorum's grant does not say so: the last node's handshake may still be under way.
/// Returns whether every server did within 5 s.
inline boost::asio::awaitable<bool> warm_up_every_node(client& c, const server_list& servers,
                                                       const lock_options& o) {
    auto warm = co_await c.async_acquire("warm", o, boost::asio::use_awaitable);
    co_await warm.async_release(boost::asio::use_awaitable);
    // The release is the warm-up's last EVALSHA: where one ran and the key is gone, both did.
    co_return co_await eventually([&] {
        for (const auto& s : servers)
            if (command_calls(*s, "evalsha") == 0 || key_exists(*s, "warm")) return false;
        return true;
    });
}

}  // namespace redlock::test

#endif
