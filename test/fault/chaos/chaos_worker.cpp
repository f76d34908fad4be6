// SPDX-License-Identifier: BSL-1.0
// One client process of the chaos harness: `coroutines` coroutines take locks of every kind
// (lock_kinds.hpp: plain, reentrant, fair, read-write and semaphore on one deployment, the fenced
// variants on another) on a few resources, with the watchdog on, hold them for random
// times (some longer than the ttl), extend some with ttls of their own, write to a fenced store
// with their fence, hand some over to other workers (a list in the store) and adopt theirs,
// and record every operation with its invoke and completion times
// (CLOCK_MONOTONIC, shared by every process on the machine) as JSON lines in the history file.
// The harness injects the faults; this process only works and records.
//
//   chaos_worker --worker K --nodes URI,URI,... --fenced-nodes URI,URI,... --store URI
//                --history FILE --seconds S --seed X [--coroutines C] [--resources R]
//                [--fenced-replicas K] [--broken 1] [--failover-quarantine 0]
//                [--restart-quarantine 0] [--ttls MS,MS,...] [--max-ttl MS] [--hand-overs 1]
// A node may be a cluster or a Sentinel URI. --fenced-replicas K: the fenced kinds' grants and
// renewals wait for K replicas (lock_options::replicas), where a failover can promote one.
// --broken 1: the negative control: one single-node client per node, and a hold as soon as any
// one node grants (a quorum of 1): its holds overlap, and each is granted by fewer nodes than
// the deployment's quorum, which the checker must report.
// --failover-quarantine 0: the failover topologies' negative control (client_config's
// failover_quarantine off): a failover that loses grants lets a second holder in.
// --restart-quarantine 0: the masters topology's negative control (client_config's
// restart_quarantine off): a server restarted empty grants again the locks it forgot.
// --ttls: the ttls a scope draws from (300,500,800 ms by default), each below --max-ttl, the
// clients' max_ttl (2000 ms by default).
// --hand-overs 1: hand leases over between workers (hand_over_lease, adopt_one).
#include "fault/chaos/history.hpp"
#include "fault/chaos/lock_kinds.hpp"
#include "support/comma_list.hpp"
#include <redlock/redis/connection.hpp>
#include <redlock/redlock.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/parallel_group.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <exception>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <sys/prctl.h>

namespace asio = boost::asio;
namespace chaos = redlock::chaos;
using namespace std::chrono_literals;
using boost::system::error_code;
using std::chrono::milliseconds;

namespace {

constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);

// The store's list of leases written out for another worker: JSON objects with the resource,
// the hold's kind, holders_allowed, its token and the hand-over text.
constexpr std::string_view handovers_key = "handovers";

// Accepts a write unless the store already accepted a larger fence; keeps the accepted ones in
// order. KEYS[1] the largest fence so far, KEYS[2] the list of accepted "fence token".
constexpr const char* store_write_lua = R"(
local largest = tonumber(redis.call('GET', KEYS[1]) or '0')
local fence = tonumber(ARGV[1])
if fence < largest then return 0 end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('RPUSH', KEYS[2], ARGV[1] .. ' ' .. ARGV[2] .. ' ' .. ARGV[3])
return 1
)";

struct args {
    int worker = 0;
    std::vector<std::string> nodes;
    std::vector<std::string> fenced_nodes;
    std::string store;
    std::string history;
    int seconds = 10;
    std::uint64_t seed = 1;
    int coroutines = 8;
    int resources = 2;
    int fenced_replicas = 0;  ///< lock_options::replicas of the fenced kinds
    bool broken = false;
    bool failover_quarantine = true;
    bool restart_quarantine = true;
    std::vector<milliseconds> ttls = {300ms, 500ms, 800ms};
    milliseconds max_ttl{2000};
    bool hand_overs = false;
};

bool parse(int argc, char** argv, args& a) {
    std::map<std::string, std::string> kv;
    for (int i = 1; i + 1 < argc; i += 2)
        kv[argv[i]] = argv[i + 1];
    for (const char* required :
         {"--worker", "--nodes", "--fenced-nodes", "--store", "--history", "--seconds", "--seed"})
        if (!kv.count(required)) return false;
    a.worker = std::stoi(kv["--worker"]);
    a.nodes = redlock::test::split_node_uris(kv["--nodes"]);
    a.fenced_nodes = redlock::test::split_node_uris(kv["--fenced-nodes"]);
    a.store = kv["--store"];
    a.history = kv["--history"];
    a.seconds = std::stoi(kv["--seconds"]);
    a.seed = std::stoull(kv["--seed"]);
    if (kv.count("--coroutines")) a.coroutines = std::stoi(kv["--coroutines"]);
    if (kv.count("--resources")) a.resources = std::stoi(kv["--resources"]);
    if (kv.count("--fenced-replicas")) a.fenced_replicas = std::stoi(kv["--fenced-replicas"]);
    if (kv.count("--broken")) a.broken = kv["--broken"] == "1";
    if (kv.count("--failover-quarantine")) a.failover_quarantine = kv["--failover-quarantine"] != "0";
    if (kv.count("--restart-quarantine")) a.restart_quarantine = kv["--restart-quarantine"] != "0";
    if (kv.count("--ttls")) {
        a.ttls.clear();
        for (const auto& t : redlock::test::split_commas(kv["--ttls"]))
            a.ttls.push_back(milliseconds(std::stoi(t)));
    }
    if (kv.count("--max-ttl")) a.max_ttl = milliseconds(std::stoi(kv["--max-ttl"]));
    if (kv.count("--hand-overs")) a.hand_overs = kv["--hand-overs"] == "1";
    for (const auto t : a.ttls)
        if (t <= 0ms || t >= a.max_ttl) return false;
    return !a.nodes.empty() && !a.fenced_nodes.empty() && a.coroutines > 0 && a.resources > 0 &&
           a.seconds > 0;
}

redlock::client_config node_config(std::vector<std::string> nodes, const args& a) {
    redlock::client_config cfg;
    cfg.nodes = std::move(nodes);
    cfg.key_prefix = "chaos:";
    // Just above our ttls: a short max_ttl keeps the quarantines short too.
    cfg.max_ttl = a.max_ttl;
    cfg.node_timeout = 50ms;
    cfg.connect_timeout = 200ms;
    cfg.restart_quarantine = a.restart_quarantine;
    cfg.failover_quarantine = a.failover_quarantine;
    cfg.retry = {5ms, 50ms};
    return cfg;
}

class worker {
public:
    worker(asio::io_context& ioc, args a)
        : ioc_(ioc), args_(std::move(a)), store_(ioc.get_executor(), store_config()) {
        out_ = std::fopen(args_.history.c_str(), "w");
        if (out_ == nullptr) throw std::runtime_error("cannot write " + args_.history);
        add_clients(clients_, args_.nodes);
        add_clients(fenced_clients_, args_.fenced_nodes);
        store_.async_connect([](error_code) {});
        deadline_ = std::chrono::steady_clock::now() + std::chrono::seconds(args_.seconds);
    }
    ~worker() { std::fclose(out_); }
    worker(const worker&) = delete;
    worker& operator=(const worker&) = delete;

    void start() {
        for (int c = 0; c < args_.coroutines; ++c)
            asio::co_spawn(ioc_, run_coroutine(c), [this](std::exception_ptr ep) {
                ++finished_;
                if (ep) {
                    try {
                        std::rethrow_exception(ep);
                    } catch (const std::exception& e) {
                        std::fprintf(stderr, "chaos_worker %d: a coroutine failed: %s\n", args_.worker,
                                     e.what());
                    }
                }
            });
    }
    [[nodiscard]] bool finished() const { return finished_ == args_.coroutines; }

    // One client for the deployment, or in the broken variant one single-node client per node.
    void add_clients(std::vector<std::unique_ptr<redlock::client>>& into,
                     const std::vector<std::string>& nodes) {
        if (args_.broken) {
            for (const auto& node : nodes)
                into.push_back(
                    std::make_unique<redlock::client>(ioc_.get_executor(), node_config({node}, args_)));
        } else {
            into.push_back(std::make_unique<redlock::client>(ioc_.get_executor(), node_config(nodes, args_)));
        }
    }

    void write_summary() {
        chaos::worker_summary s;
        s.worker = args_.worker;
        s.scopes_started = scopes_started_;
        s.scopes_ended = scopes_ended_;
        for (const auto* group : {&clients_, &fenced_clients_}) {
            for (const auto& c : *group) {
                const auto m = c->metrics();
                s.watchdogs_running += m.watchdogs_running;
                s.watchdog_renewals += m.watchdog_renewals;
                s.extends += m.extended - m.watchdog_renewals;
                s.leases_lost += m.leases_lost;
            }
        }
        s.handovers = handovers_;
        s.adoptions = adoptions_;
        record(chaos::to_json_line(s));
    }

private:
    redlock::redis::connection_config store_config() const {
        redlock::redis::connection_config cc;
        std::string why;
        if (redlock::redis::parse_node_uri(args_.store, cc.address, why)) throw std::runtime_error(why);
        return cc;
    }

    void record(const std::string& line) {
        std::fputs(line.c_str(), out_);
        std::fputc('\n', out_);
        std::fflush(out_);  // a worker killed later still leaves what it recorded
    }

    asio::awaitable<void> sleep_for(milliseconds d) {
        asio::steady_timer t(co_await asio::this_coro::executor, d);
        co_await t.async_wait(asio::use_awaitable);
    }

    asio::awaitable<void> write_to_store(const chaos::hold_record& h, redlock::lease& l) {
        const auto& resource = h.resource;
        chaos::write_record w;
        w.worker = args_.worker;
        w.resource = resource;
        w.token = l.token();
        w.fence = l.fence();
        w.valid_until = chaos::to_ns(l.valid_until());
        w.invoked = chaos::now_ns();
        redlock::resp::request req;
        req.push("EVAL", store_write_lua, "2", "store:" + resource + ":largest",
                 "store:" + resource + ":accepted", std::to_string(w.fence), w.token, h.lineage);
        // Sent in full even if the scope is cancelled meanwhile (a lost lease): a real client's
        // write in flight reaches the store all the same, and the store's fence check is what
        // turns a stale one away.
        auto [ec, replies] = co_await store_.async_exec(
            req, 2000ms, asio::bind_cancellation_slot(asio::cancellation_slot(), tuple_awaitable));
        w.completed = chaos::now_ns();
        if (ec || replies.size() != 1) co_return;  // the store is not faulted; no answer tells nothing
        w.accepted = replies[0].integer == 1;
        record(chaos::to_json_line(w));
    }

    // The body of a scope: holds for `hold`, writing its fence to the store every 50 ms or so,
    // re-enters a reentrant lock once, and now and then extends the lease with a ttl of its own
    // (longer or shorter than the last: beside the watchdog's renewals, and under the network
    // faults, delivered late after a later one). Records its end whether it returns, is
    // cancelled, or an extend says the lease is gone. With `hand_over`, its critical section
    // then ends by writing the lease out for another worker (hand_over_lease).
    asio::awaitable<void> body(redlock::lease& l, chaos::hold_record& h, const redlock::lock_options& o,
                               redlock::client& client, milliseconds hold, std::mt19937_64& rng,
                               bool hand_over = false) {
        h.acquired = chaos::now_ns();
        h.granted_until = chaos::to_ns(l.valid_until());
        h.token = l.token();
        h.fence = l.fence();
        // An adopted hold came with the lineage of the hold it continues.
        if (h.lineage.empty())
            h.lineage =
                o.reentrant ? chaos::owner_lineage(h.worker, h.coroutine) : chaos::token_lineage(h.token);
        auto note_end = [&] {
            if (h.ended != 0) return;  // ended as it was handed over
            h.ended = chaos::now_ns();
            h.valid_until = chaos::to_ns(l.valid_until());
        };
        try {
            const auto until = std::chrono::steady_clock::now() + hold;
            bool reentered = false;
            if (o.fenced) co_await write_to_store(h, l);
            while (std::chrono::steady_clock::now() < until) {
                if (o.reentrant && !reentered) {
                    reentered = true;
                    co_await reenter(client, h, l, o);
                }
                if (rng() % 10 == 0) {
                    const auto ttl = args_.ttls[rng() % args_.ttls.size()];
                    // A validity never lies further ahead than the longest ttl asked for.
                    h.ttl_ms = std::max(h.ttl_ms, static_cast<std::uint64_t>(ttl.count()));
                    auto [ec] = co_await l.async_extend(ttl, tuple_awaitable);
                    if (ec) break;  // not held any more: the scope's work stops here
                }
                const auto left =
                    std::chrono::duration_cast<milliseconds>(until - std::chrono::steady_clock::now());
                co_await sleep_for(std::clamp(left, 1ms, 50ms));
                // Also after the last sleep: a process paused in it writes as it wakes up, with
                // a lease that may have run out meanwhile (what the store's fence check is for).
                if (o.fenced) co_await write_to_store(h, l);
            }
            if (hand_over) {
                note_end();
                co_await hand_over_lease(l, h, o, rng);
            }
        } catch (...) {
            note_end();
            throw;
        }
        note_end();
    }

    // The lease written out (lease::handover) to the store's list of hand-overs, which any
    // worker's coroutine may adopt (adopt_one). This hold's critical section is over; the lease
    // is kept, as the API asks, until the adoption cancels the scope, or for up to twice its
    // ttl (then the scope releases it: an adoption after that fails, one before it must be
    // untouched by the release, the watchdog's renewals and the drop).
    asio::awaitable<void> hand_over_lease(redlock::lease& l, const chaos::hold_record& h,
                                          const redlock::lock_options& o, std::mt19937_64& rng) {
        const nlohmann::json entry = {
            {"resource", h.resource}, {"kind", h.kind},       {"holders_allowed", h.holders_allowed},
            {"token", h.token},       {"lineage", h.lineage}, {"text", l.handover()}};
        redlock::resp::request req;
        req.push("RPUSH", std::string(handovers_key), entry.dump());
        auto [ec, replies] = co_await store_.async_exec(
            req, 2000ms, asio::bind_cancellation_slot(asio::cancellation_slot(), tuple_awaitable));
        if (ec) co_return;
        ++handovers_;
        co_await sleep_for(milliseconds(rng() % static_cast<std::uint64_t>(2 * o.ttl.count() + 1)));
    }

    // Takes the oldest hand-over from the store, if any, and adopts it as a scope of its own:
    // holds as async_with_lock does (a loss ends the hold at once), then releases. False if
    // there was none.
    asio::awaitable<bool> adopt_one(int index, std::mt19937_64& rng) {
        redlock::resp::request req;
        req.push("LPOP", std::string(handovers_key));
        auto [ec, replies] = co_await store_.async_exec(req, 2000ms, tuple_awaitable);
        if (ec || replies.size() != 1 || replies[0].is_null() || replies[0].is_error()) co_return false;
        const auto entry = nlohmann::json::parse(replies[0].str, nullptr, false);
        if (!entry.is_object()) co_return false;
        redlock::lock_options o;
        o.ttl = args_.ttls[rng() % args_.ttls.size()];
        o.watchdog = true;
        chaos::hold_record h;
        h.worker = args_.worker;
        h.coroutine = index;
        h.resource = entry.value("resource", "");
        h.kind = entry.value("kind", "");
        h.holders_allowed = entry.value("holders_allowed", std::uint64_t{1});
        h.handed_from = entry.value("token", "");
        h.lineage = entry.value("lineage", "");
        h.ttl_ms = static_cast<std::uint64_t>(o.ttl.count());
        // A fenced hold lives on the fenced deployment; its adopter writes to the store with the
        // fence it took over.
        o.fenced = h.kind.starts_with("fenced");
        if (o.fenced) o.replicas = args_.fenced_replicas;
        h.invoked = chaos::now_ns();
        ++scopes_started_;
        auto& client = o.fenced ? *fenced_clients_.front() : *clients_.front();
        redlock::diagnostics diag;
        auto [adopt_ec, l] = co_await client.async_adopt(entry.value("text", ""), o, diag, tuple_awaitable);
        if (adopt_ec) {
            ++scopes_ended_;
            chaos::failure_record f;
            f.worker = args_.worker;
            f.resource = h.resource;
            f.kind = h.kind;
            f.invoked = h.invoked;
            f.completed = chaos::now_ns();
            f.error = "adopt: " + adopt_ec.message() + (diag.message.empty() ? "" : ": " + diag.message);
            record(chaos::to_json_line(f));
            co_return true;
        }
        ++adoptions_;
        h.promised_ms = promised_ms(o, client);
        h.granted = granted_nodes(diag, 0) + named_masters(client);
        h.quorum = deployment_quorum(o.fenced);
        const auto hold = milliseconds(rng() % static_cast<std::uint64_t>(o.ttl.count() * 3 / 2 + 1));
        // As async_with_lock: a loss ends the critical section (cancels the body) at once.
        auto ex = co_await asio::this_coro::executor;
        auto [order, body_error, end] =
            co_await asio::experimental::make_parallel_group(
                asio::co_spawn(ex, body(l, h, o, client, hold, rng), asio::deferred),
                l.async_wait_lost(asio::deferred))
                .async_wait(redlock::detail::with_lock_cancel_condition{}, asio::use_awaitable);
        (void)order;
        redlock::diagnostics release_diag;
        auto [release_ec] = co_await l.async_release(release_diag, tuple_awaitable);
        h.outcome = end == redlock::error::lock_lost ? "lost"
                    : release_ec                     ? release_ec.message() + ": " + release_diag.message
                                                     : "released";
        // A body that failed of itself, not cancelled by the loss, fails the coroutine (and the
        // scope counts as not ended), as any scope's would.
        if (body_error && end != redlock::error::lock_lost) std::rethrow_exception(body_error);
        ++scopes_ended_;
        record(chaos::to_json_line(h));
        co_return true;
    }

    asio::awaitable<void> reenter(redlock::client& client, const chaos::hold_record& h, redlock::lease& outer,
                                  redlock::lock_options o) {
        o.wait = 0ms;
        o.watchdog = false;
        chaos::reentry_record r;
        r.worker = args_.worker;
        r.resource = h.resource;
        r.token = h.token;
        r.outer_fence = h.fence;
        auto [ec, inner] = co_await client.async_acquire(h.resource, o, tuple_awaitable);
        r.completed = chaos::now_ns();
        r.outer_valid_until = chaos::to_ns(outer.valid_until());
        if (ec) {
            r.error = ec.message();
        } else {
            r.inner_fence = inner.fence();
            co_await inner.async_release(tuple_awaitable);
        }
        record(chaos::to_json_line(r));
    }

    // "0,2,3": the nodes that granted, by index in the deployment (`first`: the index of the
    // broken variant's single node).
    static std::string granted_nodes(const redlock::diagnostics& diag, std::size_t first) {
        std::string out;
        for (std::size_t n = 0; n < diag.nodes.size(); ++n)
            if (diag.nodes[n].result == redlock::node_outcome::verdict::granted)
                out += (out.empty() ? "" : ",") + std::to_string(first + n);
        return out;
    }

    // How many nodes of the deployment a hold needs, N / 2 + 1: of the deployment, not of the
    // client, whose own count the checker would then only repeat (the broken variant's clients
    // have one node each, and its holds one node of N).
    [[nodiscard]] std::uint64_t deployment_quorum(bool fenced) const {
        return (fenced ? args_.fenced_nodes : args_.nodes).size() / 2 + 1;
    }

    // " via host:port": the master the sentinels named last, for a Sentinel node (which server
    // of the group granted, when a violation is read).
    static std::string named_masters(const redlock::client& client) {
        std::string out;
        for (const auto& n : client.metrics().nodes)
            if (!n.sentinel_master.empty()) out += " via " + n.sentinel_master;
        return out;
    }

    // What a grant of `o` promises at least, counted from the call, as the docs state it
    // (configuration.md's drift_factor, locks.md's fair hand-off): the ttl, for a fair lock at
    // most queue_timeout, less ttl * drift_factor + 2 ms.
    static std::uint64_t promised_ms(const redlock::lock_options& o, const redlock::client& client) {
        const auto term = o.fair ? std::min(o.ttl, o.queue_timeout) : o.ttl;
        const auto drift = static_cast<double>(term.count()) * client.config().drift_factor + 2.0;
        return static_cast<std::uint64_t>(std::max(0.0, static_cast<double>(term.count()) - drift));
    }

    [[nodiscard]] bool hand_overs() const {
        return args_.hand_overs && !args_.broken && args_.failover_quarantine && args_.restart_quarantine;
    }

    asio::awaitable<void> run_coroutine(int index) {
        std::mt19937_64 rng(args_.seed * 1000003 + static_cast<std::uint64_t>(args_.worker) * 1009 +
                            static_cast<std::uint64_t>(index));
        auto pick = [&](std::size_t n) { return static_cast<int>(rng() % n); };
        while (std::chrono::steady_clock::now() < deadline_) {
            // Now and then a hand-over another worker wrote out. Not in the negative controls: the
            // broken variant's clients are one node each, and without the failover quarantine every
            // try is for the locks a failover lost.
            if (hand_overs() && pick(4) == 0 && co_await adopt_one(index, rng)) continue;
            const auto& kind = chaos::lock_kinds[static_cast<std::size_t>(pick(chaos::lock_kinds.size()))];
            const std::string resource =
                chaos::resource_name(kind, pick(static_cast<std::size_t>(args_.resources)));
            redlock::lock_options o;
            o.ttl = args_.ttls[static_cast<std::size_t>(pick(args_.ttls.size()))];
            o.wait = std::array{0ms, 300ms, 1000ms}[static_cast<std::size_t>(pick(3))];
            o.fenced = kind.fenced;
            if (o.fenced) o.replicas = args_.fenced_replicas;
            o.reentrant = kind.reentrant;
            if (o.reentrant)
                o.owner = redlock::owner_id("w" + std::to_string(args_.worker) + "c" + std::to_string(index));
            o.fair = kind.fair;
            if (o.fair) {
                o.wait = std::max(o.wait, 300ms);
                o.queue_timeout = 1500ms;
            }
            if (kind.read_write) {
                o.mode = pick(4) == 0 ? redlock::lock_mode::write : redlock::lock_mode::read;
                o.queue_timeout = 1500ms;
            }
            o.permits = kind.permits;
            const auto hold = milliseconds(pick(static_cast<std::size_t>(o.ttl.count() * 3 / 2)));
            // One hold in eight ends by writing its lease out, of every kind: an adopted fenced
            // hold writes the fence of the hold it continues; an adopted reentrant one is held
            // under an owner of the adopter's, so this coroutine, acquiring again under its own,
            // waits like any other owner.
            const bool hand_over = hand_overs() && pick(8) == 0;

            chaos::hold_record h;
            h.worker = args_.worker;
            h.coroutine = index;
            h.resource = resource;
            h.kind = kind.read_write ? (o.mode == redlock::lock_mode::write ? "write" : "read")
                                     : std::string(kind.name);
            h.ttl_ms = static_cast<std::uint64_t>(o.ttl.count());
            if (kind.permits > 0) {
                // Each node admits K; over N nodes, quorums of N / 2 + 1 admit floor(K N / quorum).
                const std::uint64_t n = args_.broken ? 1 : args_.nodes.size();
                h.holders_allowed = static_cast<std::uint64_t>(kind.permits) * n / (n / 2 + 1);
            }
            h.invoked = chaos::now_ns();
            ++scopes_started_;
            std::string outcome = "released";
            // The broken variant takes the first node that grants; the real one asks its quorum.
            auto& clients = kind.fenced ? fenced_clients_ : clients_;
            std::vector<std::size_t> order(clients.size());
            for (std::size_t i = 0; i < order.size(); ++i)
                order[i] = i;
            std::shuffle(order.begin(), order.end(), rng);
            std::string acquire_error;
            for (std::size_t i : order) {
                auto& client = *clients[i];
                redlock::diagnostics diag;
                try {
                    co_await redlock::async_with_lock(
                        client, resource, o, diag,
                        [&](redlock::lease& l) {
                            h.promised_ms = promised_ms(o, client);
                            h.granted =
                                granted_nodes(diag, clients.size() == 1 ? 0 : i) + named_masters(client);
                            h.quorum = deployment_quorum(kind.fenced);
                            return body(l, h, o, client, hold, rng, hand_over);
                        },
                        asio::use_awaitable);
                } catch (const boost::system::system_error& e) {
                    if (h.acquired == 0) {
                        acquire_error =
                            e.code().message() + (diag.message.empty() ? "" : ": " + diag.message);
                        continue;  // not acquired here
                    }
                    outcome = e.code() == redlock::error::lock_lost     ? "lost"
                              : e.code() == redlock::error::handed_over ? "handed_over"
                                                                        : e.code().message();
                }
                break;
            }
            ++scopes_ended_;
            if (h.acquired == 0) {
                chaos::failure_record f;
                f.worker = args_.worker;
                f.resource = resource;
                f.kind = kind.name;
                f.invoked = h.invoked;
                f.completed = chaos::now_ns();
                f.error = acquire_error;
                record(chaos::to_json_line(f));
                co_await sleep_for(milliseconds(1 + pick(20)));
                continue;
            }
            h.outcome = outcome;
            record(chaos::to_json_line(h));
        }
    }

    asio::io_context& ioc_;
    args args_;
    redlock::redis::connection store_;
    std::vector<std::unique_ptr<redlock::client>> clients_;         // the plain deployment
    std::vector<std::unique_ptr<redlock::client>> fenced_clients_;  // the fenced deployment
    std::FILE* out_ = nullptr;
    std::chrono::steady_clock::time_point deadline_;
    int finished_ = 0;
    std::uint64_t scopes_started_ = 0;
    std::uint64_t scopes_ended_ = 0;
    std::uint64_t handovers_ = 0;
    std::uint64_t adoptions_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
    // Dies with the harness, however it ends (a worker the harness paused too: SIGKILL ends a
    // stopped process), as the redis-servers of the fixture do.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    args a;
    try {
        if (!parse(argc, argv, a)) {
            std::fprintf(
                stderr,
                "usage: chaos_worker --worker K --nodes URI,URI,... --fenced-nodes URI,URI,... --store URI "
                "--history FILE --seconds S --seed X [--coroutines C] [--resources R] [--fenced-replicas K] "
                "[--broken 1] [--failover-quarantine 0] [--restart-quarantine 0] [--ttls MS,MS,...] "
                "[--max-ttl MS] [--hand-overs 1]\n");
            return 2;
        }
        asio::io_context ioc;
        worker w(ioc, a);
        w.start();
        // Every scope started before the deadline runs to its end; a scope is bounded by its
        // wait (1 s), its hold (1.2 s) and its release.
        const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(a.seconds + 60);
        while (!w.finished() && std::chrono::steady_clock::now() < limit)
            ioc.run_one_for(100ms);
        // A release completes at a quorum; let the other nodes' releases be answered too.
        ioc.run_for(300ms);
        w.write_summary();
        return w.finished() ? 0 : 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "chaos_worker %d: %s\n", a.worker, e.what());
        return 1;
    }
}
