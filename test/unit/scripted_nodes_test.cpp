// SPDX-License-Identifier: BSL-1.0
// The executors over scripted nodes (lock_nodes): an acquisition and its lease run as in a
// client, with every call to a node answered, or not, by the test. What the fsms decide is
// tested in acquire_fsm_test and lease_fsm_test; this is that the executors carry it out:
// calls reach the nodes they name, answers come back to the round that sent them, and each
// operation completes once.
#include "scripted_nodes.hpp"

#include "lock/acquire/start_acquire.hpp"
#include "lock/client/client_state.hpp"
#include "support/resp_values.hpp"
#include <redlock/error.hpp>
#include <redlock/lease.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace scripted_executors {

using namespace std::chrono_literals;
namespace asio = boost::asio;
using boost::system::error_code;
using redlock::lease;
using redlock::lock_options;
using redlock::test::integer_reply;
using redlock::test::scripted_nodes;
namespace resp = redlock::resp;

constexpr std::string_view replication_id = "3f1c0ffee0ddf00d3f1c0ffee0ddf00d3f1c0ffe";

// One client over `n` scripted nodes, on an io_context of its own.
struct scripted_client {
    explicit scripted_client(std::size_t n) : nodes(std::make_shared<scripted_nodes>(n)) {
        redlock::client_config cfg;
        // Addresses only for names and messages: make_over() never connects.
        for (std::size_t i = 0; i < n; ++i)
            cfg.nodes.push_back("redis://127.0.0.1:" + std::to_string(7001 + i));
        state = redlock::detail::client_state::make_over(io.get_executor(), cfg, nodes);
        nodes->answer_on(state->strand());
        // What each node's connection reads at connect, so that its grants count: a server up
        // for long (no restart quarantine), and failover_mark.lua's answer: no failover under
        // way, and its replication ID.
        resp::value mark;
        mark.kind = resp::type::array;
        mark.elements = {integer_reply(0), integer_reply(0),
                         redlock::test::bulk_reply(std::string(replication_id))};
        for (std::size_t i = 0; i < n; ++i) {
            state->health()->on_server_info(
                i, "run_id:scripted-" + std::to_string(i) + "\r\nuptime_in_seconds:86400\r\n");
            state->health()->on_failover_mark(i, mark);
        }
    }
    ~scripted_client() { nodes->forget(); }
    scripted_client(const scripted_client&) = delete;
    scripted_client& operator=(const scripted_client&) = delete;

    // Runs handlers until `done` holds; false if it does not within a bound far above what it
    // needs (only the watchdog's timers take real time).
    bool run_until(const std::function<bool()>& done) {
        const auto give_up = std::chrono::steady_clock::now() + 20s;
        while (!done()) {
            if (std::chrono::steady_clock::now() > give_up) return false;
            io.restart();
            io.run_one_for(50ms);
        }
        return true;
    }

    // Starts an acquisition of "orders:42"; its outcome lands in `result` and `held`.
    void acquire(const lock_options& o, asio::cancellation_slot slot = {}) {
        redlock::detail::start_acquire(state, "orders:42", o, &diag,
                                       asio::bind_cancellation_slot(slot, [this](error_code ec, lease l) {
                                           ++completions;
                                           result = ec;
                                           held = std::move(l);
                                       }));
    }

    // Runs the handlers ready now, and those they make ready.
    void settle() {
        do {
            io.restart();
        } while (io.poll() > 0);
    }

    // Answers each acquire pending (a plain lock's pipeline) as a grant: SET NX GET found no
    // value; a PTTL behind it, if asked, finds no key; INFO replication, the ID read at connect.
    void grant_pending() {
        for (auto* call : nodes->pending("pipeline"))
            nodes->answer(*call, grant_replies(*call));
    }
    static std::vector<resp::value> grant_replies(const scripted_nodes::sent& call) {
        std::vector<resp::value> r(1);
        for (std::size_t i = 1; i < call.owed; ++i)
            r.push_back(i == call.replication_id
                            ? redlock::test::bulk_reply(
                                  "role:master\r\nmaster_replid:" + std::string(replication_id) + "\r\n")
                            : integer_reply(-2));
        return r;
    }

    asio::io_context io;
    std::shared_ptr<scripted_nodes> nodes;
    std::shared_ptr<redlock::detail::client_state> state;
    int completions = 0;
    error_code result;
    redlock::diagnostics diag;
    lease held;
};

const std::vector<std::size_t> node_counts{1, 3, 5};

}  // namespace scripted_executors

using namespace scripted_executors;

BOOST_AUTO_TEST_SUITE(scripted_nodes_test)

BOOST_DATA_TEST_CASE(an_acquisition_over_scripted_nodes_grants_a_lease_released_on_every_node,
                     boost::unit_test::data::make(node_counts), n) {
    scripted_client c(n);
    lock_options o;
    o.ttl = 5s;
    c.acquire(o);
    BOOST_TEST_REQUIRE(c.run_until([&] { return c.nodes->pending("pipeline").size() == n; }));
    c.grant_pending();
    BOOST_TEST_REQUIRE(c.run_until([&] { return c.completions > 0; }));
    BOOST_TEST(c.completions == 1);
    BOOST_TEST(!c.result, c.diag.message);
    BOOST_TEST(c.held.held());

    std::optional<error_code> released;
    c.held.async_release([&](error_code ec) { released = ec; });
    BOOST_TEST_REQUIRE(c.run_until([&] { return c.nodes->pending("release").size() == n; }));
    for (std::size_t i = 0; i < n; ++i)
        BOOST_TEST(c.nodes->sent_to(i, "release") == 1U);
    for (auto* call : c.nodes->pending("release"))
        c.nodes->answer(*call, {integer_reply(1)});
    BOOST_TEST_REQUIRE(c.run_until([&] { return released.has_value(); }));
    BOOST_TEST(!*released, released->message());
    BOOST_TEST(c.completions == 1);
}

// A cancel after k of the N nodes granted (k short of a quorum): the acquisition completes
// once, aborted, and every node that granted or had not answered gets the release.
BOOST_DATA_TEST_CASE(a_cancel_after_each_answer_completes_once_and_releases_where_the_lock_may_be_held,
                     boost::unit_test::data::make(node_counts), n) {
    for (std::size_t granted = 0; granted < n / 2 + 1; ++granted) {
        BOOST_TEST_CONTEXT("N = " << n << ", cancelled after " << granted << " grant(s)") {
            scripted_client c(n);
            asio::cancellation_signal cancel;
            lock_options o;
            o.ttl = 5s;
            c.acquire(o, cancel.slot());
            BOOST_TEST_REQUIRE(c.run_until([&] { return c.nodes->pending("pipeline").size() == n; }));
            auto acquires = c.nodes->pending("pipeline");
            for (std::size_t i = 0; i < granted; ++i)
                c.nodes->answer(*acquires[i], scripted_client::grant_replies(*acquires[i]));
            c.settle();
            BOOST_TEST(c.completions == 0);
            cancel.emit(asio::cancellation_type::terminal);
            BOOST_TEST_REQUIRE(c.run_until([&] { return c.completions > 0; }));
            BOOST_TEST((c.result == asio::error::operation_aborted), c.result.message());
            BOOST_TEST(!c.held.held());
            for (std::size_t i = 0; i < n; ++i)
                BOOST_TEST(c.nodes->sent_to(i, "release") == 1U, "node " << i);
            // The nodes that had not answered grant after all: nothing completes twice.
            c.grant_pending();
            c.settle();
            BOOST_TEST(c.completions == 1);
        }
    }
}

// The watchdog's extends go to every node through the lease's executor; once a majority no
// longer holds the token, the lease is lost, and its waiters hear lock_lost.
BOOST_DATA_TEST_CASE(the_watchdog_extends_on_every_node_and_a_refused_extend_loses_the_lease,
                     boost::unit_test::data::make(node_counts), n) {
    scripted_client c(n);
    lock_options o;
    o.ttl = 600ms;
    o.watchdog = true;
    c.acquire(o);
    BOOST_TEST_REQUIRE(c.run_until([&] { return c.nodes->pending("pipeline").size() == n; }));
    c.grant_pending();
    BOOST_TEST_REQUIRE(c.run_until([&] { return c.completions > 0; }));
    BOOST_TEST_REQUIRE(c.held.held());
    std::optional<error_code> lost;
    c.held.async_wait_lost([&](error_code ec) { lost = ec; });

    // The first renewal: granted everywhere.
    BOOST_TEST_REQUIRE(c.run_until([&] { return c.nodes->pending("extend").size() == n; }));
    for (auto* call : c.nodes->pending("extend"))
        c.nodes->answer(*call, {integer_reply(1)});
    // The second: a majority answers that the token is no longer theirs.
    BOOST_TEST_REQUIRE(c.run_until([&] { return c.nodes->pending("extend").size() == n; }));
    for (std::size_t i = 0; i < n; ++i)
        BOOST_TEST(c.nodes->sent_to(i, "extend") == 2U, "node " << i);
    auto second = c.nodes->pending("extend");
    for (std::size_t i = 0; i < n; ++i)
        c.nodes->answer(*second[i], {integer_reply(i < n / 2 + 1 ? 0 : 1)});
    BOOST_TEST_REQUIRE(c.run_until([&] { return lost.has_value(); }));
    BOOST_TEST((*lost == redlock::error::lock_lost), lost->message());
    BOOST_TEST(!c.held.held());
}

BOOST_AUTO_TEST_SUITE_END()
