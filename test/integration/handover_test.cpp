// SPDX-License-Identifier: BSL-1.0
// One holder after a hand-over (lease::handover, client::async_adopt), for every kind of lock:
// once adopted, nothing the first lease does (drop, release, its client's close, a loss, its
// renewals) touches the adopter's hold, and the first lease learns that it was handed over.
#include "support/child_process.hpp"
#include "support/lock_helpers.hpp"
#include "support/printing.hpp"
#include "support/redis_server.hpp"
#include "support/run_coro.hpp"
#include "support/scratch_dir.hpp"
#include <redlock/redlock.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <csignal>
#include <fstream>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace asio = boost::asio;
namespace data = boost::unit_test::data;
using namespace std::chrono_literals;
using redlock::test::eventually;
using redlock::test::lock_config;
using redlock::test::no_key_anywhere;
using redlock::test::options;
using redlock::test::run_coro;
using redlock::test::sleep_for;
using redlock::test::start_redis_servers;

namespace {

constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);

enum class kind { plain, reentrant, fenced, fair, read, write, semaphore, several };
constexpr kind all_kinds[] = {kind::plain, kind::reentrant, kind::fenced,    kind::fair,
                              kind::read,  kind::write,     kind::semaphore, kind::several};

std::ostream& operator<<(std::ostream& os, kind k) {
    constexpr const char* names[] = {"plain", "reentrant", "fenced",    "fair",
                                     "read",  "write",     "semaphore", "several"};
    return os << names[static_cast<int>(k)];
}

/// How the first lease goes on after the adopter took it over.
enum class first_end { dropped, released, closed, lost };
constexpr first_end all_ends[] = {first_end::dropped, first_end::released, first_end::closed,
                                  first_end::lost};

std::ostream& operator<<(std::ostream& os, first_end e) {
    constexpr const char* names[] = {"dropped", "released", "closed", "lost"};
    return os << names[static_cast<int>(e)];
}

redlock::lock_options kind_options(kind k, std::chrono::milliseconds ttl) {
    auto o = options(ttl);
    switch (k) {
        case kind::plain:
        case kind::several:
            break;
        case kind::reentrant:
            o.reentrant = true;
            o.owner = redlock::owner_id("first");
            break;
        case kind::fenced:
            o.fenced = true;
            break;
        case kind::fair:
            o.fair = true;
            break;
        case kind::read:
            o.mode = redlock::lock_mode::read;
            break;
        case kind::write:
            o.mode = redlock::lock_mode::write;
            break;
        case kind::semaphore:
            o.permits = 1;
            break;
    }
    return o;
}

/// Whoever the first lease's hold would let in if it were freed: a writer beside a reader,
/// another owner beside a reentrant holder, the next permit of a one-permit semaphore.
redlock::lock_options rival_options(kind k) {
    auto o = kind_options(k, 10s);
    if (k == kind::read) o.mode = redlock::lock_mode::write;
    if (k == kind::reentrant) o.owner = redlock::owner_id("rival");
    return o;
}

const std::vector<std::string> several_names{"handed-a", "handed-b"};

asio::awaitable<std::tuple<boost::system::error_code, redlock::lease>> acquire_kind(redlock::client& c,
                                                                                    kind k,
                                                                                    redlock::lock_options o) {
    if (k == kind::several) co_return co_await c.async_acquire_all(several_names, o, tuple_awaitable);
    co_return co_await c.async_acquire("handed", o, tuple_awaitable);
}

/// A hold with an owner (reentrant, or a read-write lock's), taken by "first".
redlock::lock_options owned_options(kind k) {
    auto o = kind_options(k, 10s);
    o.reentrant = true;
    o.owner = redlock::owner_id("first");
    return o;
}

/// Whether every server holds the lock's keys: the first grant's late nodes have landed.
bool on_every_node(const redlock::test::server_list& servers, kind k) {
    const std::vector<std::string> one{"handed"};
    for (const auto& s : servers)
        for (const auto& name : k == kind::several ? several_names : one)
            if (!redlock::test::key_exists(*s, name)) return false;
    return true;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(handover_suite)

// The first lease dropped, released, closed with its client, or lost (its validity runs out,
// which sends its release) after the adoption: a rival is refused until the adopter lets go.
// With the first lease's token left in place, each of them freed the adopter's hold.
BOOST_DATA_TEST_CASE(what_the_first_lease_does_after_the_adoption_never_frees_the_adopters_hold,
                     data::make(all_kinds) * data::make(all_ends), k, end) {
    auto servers = start_redis_servers(3);
    asio::io_context ioc;
    std::optional<redlock::client> first_client(std::in_place, ioc.get_executor(), lock_config(servers));
    redlock::client adopter(ioc.get_executor(), lock_config(servers));
    redlock::client rival(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        // A lost first lease: no watchdog, a short ttl that runs out while the adopter holds.
        const auto first_ttl = end == first_end::lost ? 1500ms : 10000ms;
        auto [acquired, first] = co_await acquire_kind(*first_client, k, kind_options(k, first_ttl));
        BOOST_TEST_REQUIRE(!acquired, acquired.message());
        BOOST_TEST_REQUIRE(co_await eventually([&] { return on_every_node(servers, k); }));

        auto keep = kind_options(k, 8s);
        keep.watchdog = true;
        redlock::diagnostics diag;
        auto [adopt_ec, adopted] =
            co_await adopter.async_adopt(first.handover(), keep, diag, tuple_awaitable);
        BOOST_TEST_REQUIRE(!adopt_ec, adopt_ec.message() << ": " << diag.message);
        BOOST_TEST(adopted.token() != first.token());  // the adopter's own: the first one's holds nothing
        BOOST_TEST(adopted.fence() == first.fence());
        BOOST_TEST((adopted.fences() == first.fences()));

        switch (end) {
            case first_end::dropped:
                first = redlock::lease();
                break;
            case first_end::released: {
                auto [released] = co_await first.async_release(tuple_awaitable);
                BOOST_TEST((released == redlock::error::handed_over), released.message());
                break;
            }
            case first_end::closed: {
                auto [closed] = co_await first_client->async_close(tuple_awaitable);
                BOOST_TEST(!closed);
                break;
            }
            case first_end::lost: {
                auto [lost] = co_await first.async_wait_lost(tuple_awaitable);
                BOOST_TEST((lost == redlock::error::lock_lost), lost.message());
                break;
            }
        }
        // What the first lease sent (a release, in the background for a drop) has run wherever
        // it runs: the first client has nothing left in flight.
        if (end != first_end::closed) co_await first_client->async_close(tuple_awaitable);

        auto [refused, none] = co_await acquire_kind(rival, k, rival_options(k));
        BOOST_TEST((refused == redlock::error::not_acquired), refused.message());
        auto [checked] = co_await adopted.async_check(tuple_awaitable);
        BOOST_TEST(!checked, checked.message());

        auto [let_go] = co_await adopted.async_release(tuple_awaitable);
        BOOST_TEST(!let_go, let_go.message());
        auto wait = rival_options(k);
        wait.wait = 5s;
        auto [granted, next] = co_await acquire_kind(rival, k, wait);
        BOOST_TEST(!granted, granted.message());
        co_await next.async_release(asio::use_awaitable);
    }());
}

// The first lease's watchdog finds the adopter's token and ends its lease as handed over, with
// no release; async_with_lock's body, which handed its lease over, is cancelled.
BOOST_DATA_TEST_CASE(the_first_lease_learns_that_it_was_handed_over, data::make(all_kinds), k) {
    auto servers = start_redis_servers(3);
    asio::io_context ioc;
    redlock::client first_client(ioc.get_executor(), lock_config(servers));
    redlock::client adopter(ioc.get_executor(), lock_config(servers));
    redlock::client rival(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto o = kind_options(k, 3s);
        o.watchdog = true;  // renewals every second
        auto [acquired, first] = co_await acquire_kind(first_client, k, o);
        BOOST_TEST_REQUIRE(!acquired, acquired.message());
        BOOST_TEST_REQUIRE(co_await eventually([&] { return on_every_node(servers, k); }));
        const auto text = first.handover();
        auto keep = kind_options(k, 10s);
        auto [adopt_ec, adopted] = co_await adopter.async_adopt(text, keep, tuple_awaitable);
        BOOST_TEST_REQUIRE(!adopt_ec, adopt_ec.message());

        auto [ended] = co_await first.async_wait_lost(tuple_awaitable);
        BOOST_TEST((ended == redlock::error::handed_over), ended.message());
        BOOST_TEST(!first.held());
        // A second adoption of the same text finds the first token nowhere.
        auto [again, none] = co_await rival.async_adopt(text, keep, tuple_awaitable);
        BOOST_TEST((again == redlock::error::not_owner), again.message());
        auto [refused, none2] = co_await acquire_kind(rival, k, rival_options(k));
        BOOST_TEST((refused == redlock::error::not_acquired), refused.message());
        auto [extended] = co_await adopted.async_extend(10s, tuple_awaitable);
        BOOST_TEST(!extended, extended.message());
        co_await adopted.async_release(asio::use_awaitable);
        if (k != kind::several)
            BOOST_TEST(co_await eventually([&] { return no_key_anywhere(servers, "handed"); }));
    }());
}

BOOST_AUTO_TEST_CASE(a_body_that_handed_its_lease_over_is_cancelled_once_it_is_adopted) {
    auto servers = start_redis_servers(1);
    asio::io_context ioc;
    redlock::client first_client(ioc.get_executor(), lock_config(servers));
    redlock::client adopter(ioc.get_executor(), lock_config(servers));
    std::optional<redlock::lease> adopted;
    std::exception_ptr outcome;
    bool body_cancelled = false;
    auto o = options(3s);
    redlock::async_with_lock(
        first_client, "handed", o,
        [&](redlock::lease& held) -> asio::awaitable<void> {
            auto [ec, l] = co_await adopter.async_adopt(held.handover(), options(10s), tuple_awaitable);
            BOOST_TEST_REQUIRE(!ec, ec.message());
            adopted.emplace(std::move(l));
            try {
                co_await sleep_for(30s);
            } catch (const boost::system::system_error&) {
                body_cancelled = true;
                throw;
            }
        },
        [&](std::exception_ptr ep) {
            outcome = ep;
            ioc.stop();
        });
    ioc.run_for(20s);
    BOOST_TEST(body_cancelled);
    BOOST_TEST_REQUIRE(static_cast<bool>(outcome));
    try {
        std::rethrow_exception(outcome);
    } catch (const boost::system::system_error& e) {
        BOOST_TEST((e.code() == redlock::error::handed_over), e.what());
    }
    BOOST_TEST_REQUIRE(adopted.has_value());
    BOOST_TEST(adopted->held());
    BOOST_TEST(redlock::test::holder_on(*servers[0], "handed") == adopted->token());
}

// The first lease's process crashes (SIGKILL) after the adoption: the adopter's watchdog keeps
// the lock past the first lease's ttl, and a rival is refused until the adopter lets go.
BOOST_AUTO_TEST_CASE(the_first_leases_process_crashes_while_the_adopter_holds) {
    auto servers = start_redis_servers(3);
    redlock::test::scratch_dir dir;
    const auto lease_file = dir.file("lease");
    const auto child = redlock::test::spawn_shell(std::string(REDLOCK_LEASE_ADOPTER_PATH) + " --nodes " +
                                                      redlock::test::node_uris(servers) +
                                                      " --hold handed --lease " + lease_file,
                                                  dir.file("out"));
    asio::io_context ioc;
    redlock::client adopter(ioc.get_executor(), lock_config(servers));
    redlock::client rival(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        const bool written = co_await eventually([&] { return std::ifstream(lease_file).good(); }, 10s);
        BOOST_TEST_REQUIRE(written, redlock::test::read_file(dir.file("out")));
        BOOST_TEST_REQUIRE(co_await eventually([&] { return on_every_node(servers, kind::plain); }));
        auto keep = options(3s);
        keep.watchdog = true;
        auto [adopt_ec, adopted] =
            co_await adopter.async_adopt(redlock::test::read_file(lease_file), keep, tuple_awaitable);
        BOOST_TEST_REQUIRE(!adopt_ec, adopt_ec.message());
        kill(child, SIGKILL);
        BOOST_TEST(redlock::test::wait_child(child, 10s) == redlock::test::killed_by(SIGKILL));
        // Past the first lease's ttl (3 s), with the adopter's renewals in between.
        for (int i = 0; i < 4; ++i) {
            auto [refused, none] = co_await rival.async_acquire("handed", options(), tuple_awaitable);
            BOOST_TEST((refused == redlock::error::not_acquired), refused.message());
            co_await sleep_for(1s);
        }
        BOOST_TEST(adopted.held());
        co_await adopted.async_release(asio::use_awaitable);
        auto [granted, next] = co_await rival.async_acquire("handed", options(10s, 5s), tuple_awaitable);
        BOOST_TEST(!granted, granted.message());
    }());
}

// An adoption that fails gives the hold back: the first lease holds on every node again.
BOOST_DATA_TEST_CASE(a_failed_adoption_gives_the_hold_back_to_the_first_lease, data::make(all_kinds), k) {
    auto servers = start_redis_servers(3);
    asio::io_context ioc;
    redlock::client first_client(ioc.get_executor(), lock_config(servers));
    redlock::client adopter(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto [acquired, first] = co_await acquire_kind(first_client, k, kind_options(k, 10s));
        BOOST_TEST_REQUIRE(!acquired, acquired.message());
        BOOST_TEST_REQUIRE(co_await eventually([&] { return on_every_node(servers, k); }));
        // A ttl of 1 ms leaves no validity: the hand-over lands on every node, and is undone.
        // The nodes' timeout is set, not derived from that ttl (1 ms): the nodes answer, and
        // the adoption fails for its validity, not for a node that answered after 1 ms.
        auto no_validity = kind_options(k, 1ms);
        no_validity.node_timeout = 10s;
        auto [failed, none] = co_await adopter.async_adopt(first.handover(), no_validity, tuple_awaitable);
        BOOST_TEST((failed == redlock::error::validity_expired), failed.message());
        co_await adopter.async_close(tuple_awaitable);  // the give-back has run
        auto [extended] = co_await first.async_extend(10s, tuple_awaitable);
        BOOST_TEST(!extended, extended.message());
        auto [released] = co_await first.async_release(tuple_awaitable);
        BOOST_TEST(!released, released.message());
    }());
}

// The owner does not go with the hold: the adopter holds under its own (a new one here), so
// the first process, acquiring again under its owner, is refused like any other owner until
// the adopter lets go. With the owner kept, it re-entered the adopter's hold: two holders.
BOOST_DATA_TEST_CASE(an_adopted_hold_with_an_owner_is_the_adopters_own,
                     data::make({kind::reentrant, kind::write}), k) {
    auto servers = start_redis_servers(3);
    asio::io_context ioc;
    redlock::client first_client(ioc.get_executor(), lock_config(servers));
    redlock::client adopter(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto [acquired, first] = co_await acquire_kind(first_client, k, owned_options(k));
        BOOST_TEST_REQUIRE(!acquired, acquired.message());
        BOOST_TEST_REQUIRE(co_await eventually([&] { return on_every_node(servers, k); }));
        redlock::diagnostics diag;
        auto [adopt_ec, adopted] =
            co_await adopter.async_adopt(first.handover(), options(8s), diag, tuple_awaitable);
        BOOST_TEST_REQUIRE(!adopt_ec, adopt_ec.message() << ": " << diag.message);

        auto [again, none] = co_await acquire_kind(first_client, k, owned_options(k));
        BOOST_TEST((again == redlock::error::not_acquired), again.message());
        auto [checked] = co_await adopted.async_check(tuple_awaitable);
        BOOST_TEST(!checked, checked.message());
        // Written out again, the hold names the adopter's owner: a third process may take it on.
        BOOST_TEST(adopted.handover().find("\"owner\":\"first\"") == std::string::npos);

        auto [let_go] = co_await adopted.async_release(tuple_awaitable);
        BOOST_TEST(!let_go, let_go.message());
        auto [granted, next] = co_await acquire_kind(first_client, k, owned_options(k));
        BOOST_TEST(!granted, granted.message());
        co_await next.async_release(asio::use_awaitable);
    }());
}

// A hold its owner re-entered is not handed over: the inner hold would stay the first
// process's beside the adopter. The adoption says so and changes nothing; once the inner hold
// is released, the same text is adopted.
BOOST_DATA_TEST_CASE(a_re_entered_hold_is_handed_over_only_once_its_inner_hold_is_released,
                     data::make({kind::reentrant, kind::write}), k) {
    auto servers = start_redis_servers(3);
    asio::io_context ioc;
    redlock::client first_client(ioc.get_executor(), lock_config(servers));
    redlock::client adopter(ioc.get_executor(), lock_config(servers));
    run_coro(ioc, [&]() -> asio::awaitable<void> {
        auto [acquired, outer] = co_await acquire_kind(first_client, k, owned_options(k));
        BOOST_TEST_REQUIRE(!acquired, acquired.message());
        auto [entered, inner] = co_await acquire_kind(first_client, k, owned_options(k));
        BOOST_TEST_REQUIRE(!entered, entered.message());
        BOOST_TEST_REQUIRE(co_await eventually([&] { return on_every_node(servers, k); }));
        const auto text = outer.handover();

        redlock::diagnostics diag;
        auto [refused, none] = co_await adopter.async_adopt(text, options(8s), diag, tuple_awaitable);
        BOOST_TEST((refused == redlock::error::not_owner), refused.message());
        BOOST_TEST(diag.message.find("re-entered") != std::string::npos, diag.message);
        auto [outer_held] = co_await outer.async_check(tuple_awaitable);
        BOOST_TEST(!outer_held, outer_held.message());
        auto [inner_held] = co_await inner.async_check(tuple_awaitable);
        BOOST_TEST(!inner_held, inner_held.message());

        auto [inner_released] = co_await inner.async_release(tuple_awaitable);
        BOOST_TEST_REQUIRE(!inner_released, inner_released.message());
        auto [adopt_ec, adopted] = co_await adopter.async_adopt(text, options(8s), diag, tuple_awaitable);
        BOOST_TEST_REQUIRE(!adopt_ec, adopt_ec.message() << ": " << diag.message);
        auto [again, none2] = co_await acquire_kind(first_client, k, owned_options(k));
        BOOST_TEST((again == redlock::error::not_acquired), again.message());
        co_await adopted.async_release(asio::use_awaitable);
    }());
}

BOOST_AUTO_TEST_SUITE_END()
