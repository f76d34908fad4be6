// SPDX-License-Identifier: BSL-1.0
// Read-write locks (lock_options::mode) on real servers, N = 1 and N = 5.
#include "scripts/scripts_gen.hpp"
#include "support/lock_helpers.hpp"
#include "support/printing.hpp"
#include "support/redis_server.hpp"
#include "support/run_coro.hpp"
#include "support/sanitizer.hpp"
#include <redlock/redlock.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace asio = boost::asio;
namespace data = boost::unit_test::data;
using namespace std::chrono_literals;
using redlock::lock_mode;
using redlock::test::eventually;
using redlock::test::key_tag;
using redlock::test::lock_config;
using redlock::test::members_everywhere;
using redlock::test::options;
using redlock::test::run_coro;
using redlock::test::sleep_for;
using redlock::test::start_redis_servers;

namespace {

constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);
const auto node_counts = data::make({1, 5});

redlock::lock_options reading(std::chrono::milliseconds wait = 0ms, std::chrono::milliseconds ttl = 10s) {
    auto o = options(ttl, wait);
    o.mode = lock_mode::read;
    return o;
}

redlock::lock_options writing(std::chrono::milliseconds wait = 0ms, std::chrono::milliseconds ttl = 10s) {
    auto o = options(ttl, wait);
    o.mode = lock_mode::write;
    return o;
}

redlock::lock_options as_owner(redlock::lock_options o, const char* owner) {
    o.reentrant = true;
    o.owner = redlock::owner_id(owner);
    return o;
}

// Live waiting writers' marks of `resource` on every server.
bool marks_everywhere(const redlock::test::server_list& servers, const std::string& resource,
                      std::int64_t n) {
    for (const auto& s : servers)
        if (s->command({"ZCARD", key_tag(resource) + ":rw:waiting"}).integer != n) return false;
    return true;
}

// Neither a hold, nor its mode, nor a mark is left on any server.
bool nothing_left(const redlock::test::server_list& servers, const std::string& resource) {
    return redlock::test::no_keys_anywhere(servers, resource, {"rw", "rw:waiting"});
}

}  // namespace

BOOST_AUTO_TEST_SUITE(read_write_test)

BOOST_DATA_TEST_CASE(readers_share_and_a_writer_excludes_everyone, node_counts, n) {
    auto servers = start_redis_servers(static_cast<std::size_t>(n));
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        std::vector<redlock::lease> readers;
        for (int i = 0; i < 3; ++i) {
            auto [ec, l] = co_await client.async_acquire("doc", reading(), tuple_awaitable);
            BOOST_TEST_REQUIRE(!ec, ec.message());
            readers.push_back(std::move(l));
        }
        BOOST_TEST(co_await eventually([&] { return members_everywhere(servers, "doc", 3); }));

        // Neither a writer nor an exclusive lock gets in beside readers, nor a semaphore.
        auto [w, none] = co_await client.async_acquire("doc", writing(), tuple_awaitable);
        BOOST_TEST(w == redlock::error::not_acquired);
        auto [plain, no_lock] = co_await client.async_acquire("doc", options(), tuple_awaitable);
        BOOST_TEST(plain == redlock::error::not_acquired);
        auto k = options();
        k.permits = 5;
        auto [sem, no_permit] = co_await client.async_acquire("doc", k, tuple_awaitable);
        BOOST_TEST(sem == redlock::error::not_acquired);
        BOOST_TEST(co_await eventually([&] { return members_everywhere(servers, "doc", 3); }));

        // Extend and check work on a read hold; a release frees only its own.
        co_await readers[0].async_extend(5s, asio::use_awaitable);
        co_await readers[0].async_check(asio::use_awaitable);
        for (auto& r : readers)
            co_await r.async_release(asio::use_awaitable);
        auto [twice] = co_await readers[1].async_release(tuple_awaitable);
        BOOST_TEST(twice == redlock::error::not_owner);
        BOOST_TEST(co_await eventually([&] { return nothing_left(servers, "doc"); }));

        // A writer alone: readers, writers and exclusive locks are refused.
        auto writer = co_await client.async_acquire("doc", writing(), asio::use_awaitable);
        BOOST_TEST(co_await eventually([&] { return members_everywhere(servers, "doc", 1); }));
        auto [r, no_reader] = co_await client.async_acquire("doc", reading(), tuple_awaitable);
        BOOST_TEST(r == redlock::error::not_acquired);
        auto [w2, no_writer] = co_await client.async_acquire("doc", writing(), tuple_awaitable);
        BOOST_TEST(w2 == redlock::error::not_acquired);
        auto [plain2, no_lock2] = co_await client.async_acquire("doc", options(), tuple_awaitable);
        BOOST_TEST(plain2 == redlock::error::not_acquired);
        co_await writer.async_release(asio::use_awaitable);
        BOOST_TEST(co_await eventually([&] { return nothing_left(servers, "doc"); }));

        // An exclusive lock keeps readers out too.
        auto exclusive = co_await client.async_acquire("doc", options(), asio::use_awaitable);
        auto [r2, no_reader2] = co_await client.async_acquire("doc", reading(), tuple_awaitable);
        BOOST_TEST(r2 == redlock::error::not_acquired);
        co_await exclusive.async_release(asio::use_awaitable);
    }());
}

BOOST_DATA_TEST_CASE(a_waiting_writer_holds_new_readers_off_and_gets_in_when_the_readers_leave, node_counts,
                     n) {
    auto servers = start_redis_servers(static_cast<std::size_t>(n));
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto first = co_await client.async_acquire("cfg", reading(), asio::use_awaitable);
        BOOST_TEST(co_await eventually([&] { return members_everywhere(servers, "cfg", 1); }));

        std::optional<redlock::lease> writer;
        std::optional<boost::system::error_code> writer_ec;
        asio::co_spawn(
            ioc,
            [&]() -> asio::awaitable<void> {
                auto [ec, l] = co_await client.async_acquire("cfg", writing(30s), tuple_awaitable);
                writer_ec = ec;
                writer = std::move(l);
            },
            asio::detached);
        BOOST_TEST_REQUIRE(co_await eventually([&] { return marks_everywhere(servers, "cfg", 1); }));

        // The writer's mark: a new reader waits, the one inside may read on.
        auto [late, none] = co_await client.async_acquire("cfg", reading(), tuple_awaitable);
        BOOST_TEST(late == redlock::error::not_acquired);
        co_await first.async_extend(10s, asio::use_awaitable);
        BOOST_TEST(!writer_ec.has_value());

        // The reader leaves: the writer is woken and holds alone; its mark is gone.
        co_await first.async_release(asio::use_awaitable);
        BOOST_TEST_REQUIRE(co_await eventually([&] { return writer_ec.has_value(); }, 30s));
        BOOST_TEST(!*writer_ec, writer_ec->message());
        BOOST_TEST(co_await eventually([&] { return marks_everywhere(servers, "cfg", 0); }));
        auto [during, no_reader] = co_await client.async_acquire("cfg", reading(), tuple_awaitable);
        BOOST_TEST(during == redlock::error::not_acquired);

        // And readers once it has gone.
        co_await writer->async_release(asio::use_awaitable);
        auto after = co_await client.async_acquire("cfg", reading(5s), asio::use_awaitable);
        co_await after.async_release(asio::use_awaitable);
        BOOST_TEST(co_await eventually([&] { return nothing_left(servers, "cfg"); }));
    }());
}

BOOST_DATA_TEST_CASE(a_writer_that_gives_up_takes_its_mark_away, node_counts, n) {
    auto servers = start_redis_servers(static_cast<std::size_t>(n));
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto reader = co_await client.async_acquire("gave-up", reading(), asio::use_awaitable);
        auto [ec, none] = co_await client.async_acquire("gave-up", writing(300ms), tuple_awaitable);
        BOOST_TEST(ec == redlock::error::wait_timeout);
        BOOST_TEST(co_await eventually([&] { return marks_everywhere(servers, "gave-up", 0); }));
        auto other = co_await client.async_acquire("gave-up", reading(), asio::use_awaitable);

        // Cancelled while it waits: the same.
        asio::cancellation_signal cancel;
        std::optional<boost::system::error_code> cancelled;
        client.async_acquire(
            "gave-up", writing(30s),
            asio::bind_cancellation_slot(
                cancel.slot(), [&](boost::system::error_code e, redlock::lease) { cancelled = e; }));
        BOOST_TEST_REQUIRE(co_await eventually([&] { return marks_everywhere(servers, "gave-up", 1); }));
        cancel.emit(asio::cancellation_type::terminal);
        BOOST_TEST_REQUIRE(co_await eventually([&] { return cancelled.has_value(); }));
        BOOST_TEST((*cancelled == asio::error::operation_aborted));
        BOOST_TEST(co_await eventually([&] { return marks_everywhere(servers, "gave-up", 0); }));
        auto third = co_await client.async_acquire("gave-up", reading(), asio::use_awaitable);

        co_await reader.async_release(asio::use_awaitable);
        co_await other.async_release(asio::use_awaitable);
        co_await third.async_release(asio::use_awaitable);
        BOOST_TEST(co_await eventually([&] { return nothing_left(servers, "gave-up"); }));
    }());
}

// 50 readers take turns hand over hand: each reads for 5 ms, then leaves once another reader is
// in (or 500 ms later), so that some reader always reads while newcomers get in. Without the
// waiting writer's mark the writer never finds the resource free (checked by hand: with the
// mark turned off it waited out its 60 s); with it, newcomers wait and the last readers leave.
BOOST_DATA_TEST_CASE(a_writer_is_not_starved_by_50_looping_readers, node_counts, n) {
    auto servers = start_redis_servers(static_cast<std::size_t>(n));
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), lock_config(servers));
    constexpr int reader_count = 50;
    run_coro(
        ioc,
        [&]() -> asio::awaitable<void> {
            int reading_now = 0;
            bool writing_now = false;
            bool stop = false;
            int stopped = 0;
            int reads = 0;
            int overlaps = 0;
            std::vector<boost::system::error_code> failures;
            for (int i = 0; i < reader_count; ++i) {
                asio::co_spawn(
                    ioc,
                    [&]() -> asio::awaitable<void> {
                        while (!stop) {
                            auto [ec, l] =
                                co_await client.async_acquire("hot", reading(60s), tuple_awaitable);
                            if (ec) {
                                failures.push_back(ec);
                                break;
                            }
                            ++reading_now;
                            ++reads;
                            if (writing_now) ++overlaps;
                            co_await sleep_for(5ms);
                            const auto leave_by = std::chrono::steady_clock::now() + 500ms;
                            while (reading_now < 2 && std::chrono::steady_clock::now() < leave_by)
                                co_await sleep_for(1ms);
                            if (writing_now) ++overlaps;
                            --reading_now;
                            co_await l.async_release(asio::use_awaitable);
                        }
                        ++stopped;
                    },
                    asio::detached);
            }
            // Every reader in its loop, and reads overlapping, before the writer comes.
            BOOST_TEST_REQUIRE(co_await eventually([&] { return reads >= 2 * reader_count; }, 60s));

            const auto reads_before = reads;
            redlock::diagnostics diag;
            auto [ec, writer] = co_await client.async_acquire("hot", writing(60s), diag, tuple_awaitable);
            BOOST_TEST_REQUIRE(!ec, ec.message() << ": " << diag.message);
            writing_now = true;
            BOOST_TEST(reading_now == 0);
            co_await sleep_for(50ms);
            BOOST_TEST(reading_now == 0);
            writing_now = false;
            co_await writer.async_release(asio::use_awaitable);
            BOOST_TEST_MESSAGE("N = " << n << ": the writer got in after " << diag.attempts << " attempts, "
                                      << reads - reads_before << " reads");

            // Readers go on after it.
            const auto reads_after_writer = reads;
            BOOST_TEST(co_await eventually([&] { return reads > reads_after_writer + reader_count; }, 60s));
            stop = true;
            BOOST_TEST_REQUIRE(co_await eventually([&] { return stopped == reader_count; }, 60s));
            BOOST_TEST(failures.empty(), failures.size()
                                             << " readers failed, first: "
                                             << (failures.empty() ? "" : failures.front().message()));
            BOOST_TEST(overlaps == 0);
            BOOST_TEST(co_await eventually([&] { return nothing_left(servers, "hot"); }));
        }(),
        240s);
}

BOOST_DATA_TEST_CASE(an_owner_may_read_while_it_writes_and_downgrade_but_never_upgrade, node_counts, n) {
    auto servers = start_redis_servers(static_cast<std::size_t>(n));
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        // Writing, the owner may read and write again; nobody else may do either.
        auto write = co_await client.async_acquire("page", as_owner(writing(), "me"), asio::use_awaitable);
        auto again = co_await client.async_acquire("page", as_owner(writing(), "me"), asio::use_awaitable);
        auto read = co_await client.async_acquire("page", as_owner(reading(), "me"), asio::use_awaitable);
        auto [other, none] =
            co_await client.async_acquire("page", as_owner(reading(), "you"), tuple_awaitable);
        BOOST_TEST(other == redlock::error::not_acquired);
        auto [anon, none2] = co_await client.async_acquire("page", reading(), tuple_awaitable);
        BOOST_TEST(anon == redlock::error::not_acquired);

        // The writes released, the read is left: a downgrade. Others read beside it now.
        co_await write.async_release(asio::use_awaitable);
        co_await again.async_release(asio::use_awaitable);
        auto theirs = co_await client.async_acquire("page", as_owner(reading(), "you"), asio::use_awaitable);
        BOOST_TEST(co_await eventually([&] { return members_everywhere(servers, "page", 2); }));

        // Reading only, asking to write: refused at once, even with a wait (another reader
        // doing the same would wait for us while we waited for it).
        redlock::diagnostics diag;
        auto [up, no_write] =
            co_await client.async_acquire("page", as_owner(writing(30s), "me"), diag, tuple_awaitable);
        BOOST_TEST(up == redlock::error::upgrade_refused, up.message());
        BOOST_TEST(diag.attempts == 1u);
        BOOST_TEST(diag.message.find("release the read lease first") != std::string::npos, diag.message);
        // The refusal left no mark: readers still get in.
        BOOST_TEST(co_await eventually([&] { return marks_everywhere(servers, "page", 0); }));

        // A writer waits for both readers; meanwhile the reading owner may read again (its
        // reads are in: holding them off would deadlock), others may not.
        std::optional<boost::system::error_code> writer_ec;
        redlock::lease writer;
        asio::co_spawn(
            ioc,
            [&]() -> asio::awaitable<void> {
                auto [ec, l] =
                    co_await client.async_acquire("page", as_owner(writing(30s), "them"), tuple_awaitable);
                writer_ec = ec;
                writer = std::move(l);
            },
            asio::detached);
        BOOST_TEST_REQUIRE(co_await eventually([&] { return marks_everywhere(servers, "page", 1); }));
        auto reentered =
            co_await client.async_acquire("page", as_owner(reading(), "me"), asio::use_awaitable);
        auto [newcomer, none3] =
            co_await client.async_acquire("page", as_owner(reading(), "new"), tuple_awaitable);
        BOOST_TEST(newcomer == redlock::error::not_acquired);

        co_await read.async_release(asio::use_awaitable);
        co_await reentered.async_release(asio::use_awaitable);
        co_await theirs.async_release(asio::use_awaitable);
        BOOST_TEST_REQUIRE(co_await eventually([&] { return writer_ec.has_value(); }, 30s));
        BOOST_TEST(!*writer_ec, writer_ec->message());
        co_await writer.async_release(asio::use_awaitable);
        BOOST_TEST(co_await eventually([&] { return nothing_left(servers, "page"); }));
    }());
}

BOOST_DATA_TEST_CASE(writers_are_fenced_and_readers_are_not, node_counts, n) {
    auto servers = start_redis_servers(static_cast<std::size_t>(n));
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto fenced = writing();
        fenced.fenced = true;
        std::uint64_t last = 0;
        for (int i = 0; i < 3; ++i) {
            auto w = co_await client.async_acquire("ledger", fenced, asio::use_awaitable);
            BOOST_TEST(w.fence() > last);
            last = w.fence();
            co_await w.async_release(asio::use_awaitable);
            auto r = co_await client.async_acquire("ledger", reading(), asio::use_awaitable);
            BOOST_TEST(r.fence() == 0u);
            co_await r.async_release(asio::use_awaitable);
        }
        auto fenced_reader = reading();
        fenced_reader.fenced = true;
        redlock::diagnostics diag;
        auto [ec, none] = co_await client.async_acquire("ledger", fenced_reader, diag, tuple_awaitable);
        BOOST_TEST(ec == redlock::error::invalid_config);
        BOOST_TEST(diag.message.find("lock_options::mode") != std::string::npos, diag.message);
    }());
}

BOOST_DATA_TEST_CASE(a_dead_readers_hold_lapses_and_the_watchdog_keeps_a_live_one, node_counts, n) {
    auto servers = start_redis_servers(static_cast<std::size_t>(n));
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        // Not renewed, as a dead process's: its hold lapses by the servers' clock.
        auto lapsing = co_await client.async_acquire("lapse", reading(0ms, 400ms), asio::use_awaitable);
        auto kept_options = reading(0ms, 1500ms);
        kept_options.watchdog = true;
        auto kept = co_await client.async_acquire("kept", kept_options, asio::use_awaitable);
        redlock::diagnostics diag;
        auto [ec, writer] = co_await client.async_acquire("lapse", writing(30s), diag, tuple_awaitable);
        BOOST_TEST_REQUIRE(!ec, ec.message() << ": " << diag.message);
        auto [lost] = co_await lapsing.async_extend(1s, tuple_awaitable);
        BOOST_TEST(lost == redlock::error::lock_lost);
        co_await writer.async_release(asio::use_awaitable);

        co_await sleep_for(2500ms);
        BOOST_TEST(kept.held());
        auto [refused, none] = co_await client.async_acquire("kept", writing(), tuple_awaitable);
        BOOST_TEST(refused == redlock::error::not_acquired);
        co_await kept.async_release(asio::use_awaitable);
        BOOST_TEST(co_await eventually([&] { return nothing_left(servers, "kept"); }));
    }());
}

BOOST_DATA_TEST_CASE(inspect_names_the_readers_the_writer_and_the_waiting_writers, node_counts, n) {
    auto servers = start_redis_servers(static_cast<std::size_t>(n));
    asio::io_context ioc;
    redlock::client client(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto r1 = co_await client.async_acquire("seen", reading(), asio::use_awaitable);
        auto r2 = co_await client.async_acquire("seen", reading(), asio::use_awaitable);
        std::optional<boost::system::error_code> writer_ec;
        redlock::lease writer;
        asio::co_spawn(
            ioc,
            [&]() -> asio::awaitable<void> {
                auto [ec, l] = co_await client.async_acquire("seen", writing(30s), tuple_awaitable);
                writer_ec = ec;
                writer = std::move(l);
            },
            asio::detached);
        BOOST_TEST_REQUIRE(co_await eventually([&] { return marks_everywhere(servers, "seen", 1); }));
        BOOST_TEST_REQUIRE(co_await eventually([&] { return members_everywhere(servers, "seen", 2); }));
        auto i = co_await client.async_inspect("seen", asio::use_awaitable);
        BOOST_TEST(i.held());
        BOOST_TEST(i.holders.size() == 2u);
        for (const auto& node : i.nodes) {
            BOOST_TEST((node.type == redlock::hold_type::read_write));
            BOOST_TEST(node.writers.empty());
            BOOST_TEST(node.queued == 1);
        }
        BOOST_TEST(redlock::to_json(i).find("\"type\":\"read-write\"") != std::string::npos,
                   redlock::to_json(i));

        co_await r1.async_release(asio::use_awaitable);
        co_await r2.async_release(asio::use_awaitable);
        BOOST_TEST_REQUIRE(co_await eventually([&] { return writer_ec.has_value(); }, 30s));
        BOOST_TEST_REQUIRE(!*writer_ec, writer_ec->message());
        // Its mark is gone, also where its winning round was refused (a reader's release late).
        BOOST_TEST(co_await eventually([&] { return marks_everywhere(servers, "seen", 0); }));
        const std::vector<std::string> the_writer{writer.token()};
        for (int tries = 0; tries < 100; ++tries) {  // until the readers' releases reach every node
            i = co_await client.async_inspect("seen", asio::use_awaitable);
            if (i.holders == the_writer) break;
            co_await sleep_for(20ms);
        }
        BOOST_TEST(i.holders == the_writer);
        for (const auto& node : i.nodes) {
            BOOST_TEST(node.writers == node.holders);  // the writer, or nobody where it was refused
            BOOST_TEST(node.queued == 0);
        }

        // A forced release frees it and wakes every waiting reader.
        std::vector<redlock::lease> readers(3);
        int woken = 0;
        const auto refused_before = client.metrics().contended;
        for (auto& r : readers) {
            asio::co_spawn(
                ioc,
                [&]() -> asio::awaitable<void> {
                    auto [ec, l] = co_await client.async_acquire("seen", reading(30s), tuple_awaitable);
                    if (!ec) ++woken;
                    r = std::move(l);
                },
                asio::detached);
        }
        // Each tried, and was refused.
        BOOST_TEST_REQUIRE(
            co_await eventually([&] { return client.metrics().contended >= refused_before + 3; }));
        BOOST_TEST(woken == 0);
        co_await client.async_force_release("seen", asio::use_awaitable);
        BOOST_TEST(co_await eventually([&] { return woken == 3; }, 30s));
        for (auto& r : readers)
            co_await r.async_release(asio::use_awaitable);
        BOOST_TEST(co_await eventually([&] { return nothing_left(servers, "seen"); }));
    }());
}

// The scripts on their own: expired holds and marks are nobody's, and a semaphore's sorted set
// is not taken for a read-write lock's, nor the other way round.
BOOST_AUTO_TEST_CASE(expired_holds_and_marks_count_for_nothing_and_kinds_do_not_mix) {
    auto servers = start_redis_servers(1);
    const auto& s = *servers[0];
    const auto eval = [&](const redlock::redis::script& script, std::vector<std::string> keys,
                          std::vector<std::string> args) {
        std::vector<std::string> cmd{"EVAL", std::string(script.source), std::to_string(keys.size())};
        cmd.insert(cmd.end(), keys.begin(), keys.end());
        cmd.insert(cmd.end(), args.begin(), args.end());
        return s.command(cmd);
    };
    const auto server_ms = [&] {
        auto t = s.command({"TIME"});
        return std::stoll(t.elements[0].str) * 1000 + std::stoll(t.elements[1].str) / 1000;
    };
    const auto tag = key_tag("old");
    const std::vector<std::string> keys{tag + ":lock", tag + ":rw", tag + ":rw:waiting", tag + ":fence"};
    const auto past = std::to_string(server_ms() - 1000);
    s.command({"ZADD", keys[0], past, "dead-writer"});
    s.command({"HSET", keys[1], "dead-writer", "w 0 "});
    s.command({"ZADD", keys[2], past, "dead-waiter"});
    BOOST_TEST(eval(redlock::scripts::rw_extend, {keys[0], keys[1]}, {"dead-writer", "5000"}).integer == 0);
    auto read = eval(redlock::scripts::rw_acquire, keys, {"reader", "5000", "r", "", "0", "0"});
    BOOST_TEST_REQUIRE(read.elements.size() == 2u);
    BOOST_TEST(read.elements[0].integer == 1);
    BOOST_TEST(s.command({"HEXISTS", keys[1], "dead-writer"}).integer == 0);  // dropped with its hold
    BOOST_TEST(s.command({"PTTL", keys[0]}).integer > 0);
    BOOST_TEST(s.command({"PTTL", keys[1]}).integer > 0);

    // A writer refused with a wait leaves a mark; one without a wait does not.
    auto refused = eval(redlock::scripts::rw_acquire, keys, {"writer", "5000", "w", "", "0", "0"});
    BOOST_TEST(refused.elements[0].integer == 0);
    BOOST_TEST(refused.elements[1].integer > 0);
    BOOST_TEST(refused.elements[1].integer <= 5000);
    BOOST_TEST(s.command({"EXISTS", keys[2]}).integer == 0);
    eval(redlock::scripts::rw_acquire, keys, {"writer", "5000", "w", "", "3000", "0"});
    BOOST_TEST(s.command({"ZCARD", keys[2]}).integer == 1);
    BOOST_TEST(s.command({"PTTL", keys[2]}).integer > 0);
    // Its next round moves the mark to its new token.
    eval(redlock::scripts::rw_acquire, keys, {"writer-2", "5000", "w", "", "3000", "0", "writer"});
    BOOST_TEST(s.command({"ZRANGE", keys[2], "0", "-1"}).elements.size() == 1u);
    BOOST_TEST(s.command({"ZSCORE", keys[2], "writer-2"}).str != "");
    // A round's cleanup keeps the mark; the acquisition's end takes it away.
    const std::vector<std::string> release_keys{keys[0], keys[1], keys[2], tag + ":released"};
    eval(redlock::scripts::rw_release, release_keys, {"writer-2", "quiet"});
    BOOST_TEST(s.command({"ZCARD", keys[2]}).integer == 1);
    eval(redlock::scripts::rw_release, release_keys, {"writer-2", "leave"});
    BOOST_TEST(s.command({"EXISTS", keys[2]}).integer == 0);

    // A semaphore's permits are not a read-write lock's holds, and the other way round.
    const auto sem = key_tag("sem");
    s.command({"ZADD", sem + ":lock", std::to_string(server_ms() + 60000), "permit", "-3", "#permits"});
    auto on_semaphore =
        eval(redlock::scripts::rw_acquire, {sem + ":lock", sem + ":rw", sem + ":rw:waiting", sem + ":fence"},
             {"reader", "5000", "r", "", "0", "0"});
    BOOST_TEST(on_semaphore.elements[0].integer == 0);
    BOOST_TEST(s.command({"EXISTS", sem + ":rw"}).integer == 0);
    auto on_rw = eval(redlock::scripts::semaphore_acquire, {keys[0], keys[1]}, {"permit", "5000", "10"});
    BOOST_TEST(on_rw.elements[0].integer == 0);
    BOOST_TEST(s.command({"ZCARD", keys[0]}).integer == 1);  // the reader alone
}

BOOST_AUTO_TEST_SUITE_END()
