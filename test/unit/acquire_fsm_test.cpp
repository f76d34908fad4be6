// SPDX-License-Identifier: BSL-1.0
// The acquisition as a pure state machine (acquire_fsm), driven by scripted answers and a fake
// clock (acquire_driver.hpp): every kind of lock at N = 1, 3 and 5, with a cancel after each
// event, and with a node's failure in place of each reply.
#include "acquire_driver.hpp"

#include <boost/asio/error.hpp>
#include <boost/test/unit_test.hpp>

#include <array>
#include <chrono>
#include <random>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using redlock::test::acquire_driver;
using redlock::test::lock_shape;
using redlock::test::name_of;
using event_type = redlock::detail::acquire_event::type;
using redlock::detail::acquire_event;

namespace {

constexpr std::array shapes{lock_shape::plain, lock_shape::fenced,    lock_shape::reentrant,
                            lock_shape::fair,  lock_shape::semaphore, lock_shape::read,
                            lock_shape::write, lock_shape::several};
constexpr std::array node_counts{std::size_t{1}, std::size_t{3}, std::size_t{5}};

// How many events the acquisition takes without a fault: the steps to inject at.
std::size_t steps_of(lock_shape shape, std::size_t nodes) {
    acquire_driver d(shape, nodes, 5s);
    std::size_t steps = 0;
    d.run([&](std::size_t, acquire_driver&) {
        ++steps;
        return false;
    });
    return steps;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(acquire_fsm_test)

BOOST_AUTO_TEST_CASE(every_kind_takes_the_lock_in_the_round_after_a_refused_one) {
    for (auto shape : shapes) {
        for (auto nodes : node_counts) {
            BOOST_TEST_CONTEXT(name_of(shape) << " at N = " << nodes) {
                acquire_driver d(shape, nodes, 5s);
                d.run([](std::size_t, acquire_driver&) { return false; });
                BOOST_TEST(!d.stuck());
                BOOST_TEST(d.finishes() == 1u);
                BOOST_TEST(!d.result());
                BOOST_TEST(d.granted());
                BOOST_TEST(d.attempts() == 2u);
            }
        }
    }
}

BOOST_AUTO_TEST_CASE(without_a_wait_a_refused_round_is_the_end_and_releases_nothing_it_was_refused) {
    for (auto shape : shapes) {
        for (auto nodes : node_counts) {
            BOOST_TEST_CONTEXT(name_of(shape) << " at N = " << nodes) {
                acquire_driver d(shape, nodes, 0ms);
                d.run([](std::size_t, acquire_driver&) { return false; });
                BOOST_TEST(d.finishes() == 1u);
                BOOST_TEST((d.result() == redlock::error::not_acquired));
                BOOST_TEST(d.attempts() == 1u);
                BOOST_TEST(d.nodes_left_holding().empty());
            }
        }
    }
}

// A cancel after each event: every node that may hold one of our tokens gets the release
// (and a fair waiter's place or a writer's mark goes from every node), and the completion comes
// once, with operation_aborted unless the lock was ours before.
BOOST_AUTO_TEST_CASE(a_cancel_at_every_step_releases_what_may_be_held_and_completes_once) {
    for (auto shape : shapes) {
        for (auto nodes : node_counts) {
            const auto steps = steps_of(shape, nodes);
            BOOST_TEST(steps > 2u * nodes);
            for (std::size_t at = 0; at <= steps; ++at) {
                BOOST_TEST_CONTEXT(name_of(shape)
                                   << " at N = " << nodes << ", cancelled before event " << at) {
                    acquire_driver d(shape, nodes, 5s);
                    bool cancelled_before_the_end = false;
                    d.run([&](std::size_t k, acquire_driver& self) {
                        if (k == at) {
                            cancelled_before_the_end = self.finishes() == 0;
                            self.cancel();
                        }
                        return false;
                    });
                    BOOST_TEST(!d.stuck());
                    BOOST_TEST(d.finishes() == 1u);
                    if (cancelled_before_the_end) {
                        BOOST_TEST((d.result() == boost::asio::error::operation_aborted));
                        BOOST_TEST(!d.granted());
                        BOOST_TEST(d.nodes_left_holding().empty());
                        if (d.leaves_places()) BOOST_TEST(d.places_left().empty());
                    } else {
                        BOOST_TEST(d.granted());
                    }
                }
            }
        }
    }
}

// A node's failure (a timeout: the command may have run) in place of each reply: the
// acquisition still ends once, with the lock (a later round has it), and whatever a failed
// round may hold on a node is cleaned up there.
BOOST_AUTO_TEST_CASE(a_node_failure_at_every_step_still_ends_once_with_the_lock) {
    for (auto shape : shapes) {
        for (auto nodes : node_counts) {
            const auto steps = steps_of(shape, nodes);
            for (std::size_t at = 1; at <= steps; ++at) {
                BOOST_TEST_CONTEXT(name_of(shape) << " at N = " << nodes << ", failed at event " << at) {
                    acquire_driver d(shape, nodes, 5s);
                    d.run([&](std::size_t k, acquire_driver&) { return k == at; });
                    BOOST_TEST(!d.stuck());
                    BOOST_TEST(d.finishes() == 1u);
                    BOOST_TEST(!d.result());
                    BOOST_TEST(d.granted());
                }
            }
        }
    }
}

// Without a wait, a failure in the only round: the acquisition fails, and a node that may have
// granted before it timed out gets the release.
BOOST_AUTO_TEST_CASE(a_failed_node_of_a_lost_final_round_is_released) {
    for (auto shape : shapes) {
        BOOST_TEST_CONTEXT(name_of(shape)) {
            acquire_driver d(shape, 3, 0ms);
            d.run([&](std::size_t k, acquire_driver&) { return k == 1 || k == 2; });
            BOOST_TEST(d.finishes() == 1u);
            BOOST_TEST((d.result() == redlock::error::quorum_unreachable));
            BOOST_TEST(d.nodes_left_holding().empty());
        }
    }
}

// A reply of round 1 that comes while round 2 runs counts for nothing; the sleep's timer after
// a release message ended the sleep does nothing either.
BOOST_AUTO_TEST_CASE(a_late_reply_of_an_earlier_round_and_a_stale_timer_do_nothing) {
    acquire_driver d(lock_shape::plain, 3, 5s);
    std::size_t sleep_events = 0;
    d.run([&](std::size_t k, acquire_driver& self) {
        if (k == 4 && sleep_events++ == 0) {
            // Round 1 was refused by all three; its sleep is on. A release message ends it now.
            self.resume(acquire_event::of(event_type::released));
            // Its timer, now stale, and round 1's answer once more, as a grant.
            self.resume(acquire_event::sleep_ended_for(1));
            const auto grant =
                std::vector<redlock::resp::value>{redlock::resp::value{}, redlock::test::integer_reply(-2)};
            self.resume(acquire_event::from_node(event_type::answer, 1, 0, {}, grant));
        }
        return false;
    });
    BOOST_TEST(d.finishes() == 1u);
    BOOST_TEST(d.granted());
    BOOST_TEST(d.attempts() == 2u);  // the stale timer started no third round
}

// The final round of an acquisition that gives up: its release goes out when the round is lost,
// and a node still to answer then finds the key held by an earlier round of ours (whose reply
// was lost). The straggler gets that key's release, naming that round's token.
BOOST_AUTO_TEST_CASE(a_straggler_of_the_final_round_frees_the_key_of_an_earlier_round) {
    using redlock::detail::acquire_action;
    using redlock::test::bulk_reply;
    using redlock::test::integer_reply;
    redlock::test::fake_acquire_context context(3);
    redlock::detail::acquire_fsm fsm(acquire_driver::setup(lock_shape::plain, 3, 1ms), context);
    const auto t0 = std::chrono::steady_clock::time_point() + 1h;
    std::mt19937_64 rng(1);
    const std::vector<redlock::resp::value> denied{bulk_reply("another-owner"), integer_reply(500)};
    unsigned sleep = 0;
    const auto run = [&](const acquire_event& e, std::chrono::steady_clock::time_point now) {
        for (const auto& a : fsm.resume(e, now, rng))
            if (a.what == acquire_action::type::sleep_until) sleep = a.sleep;
    };
    run(acquire_event::of(event_type::start), t0);
    // Two refusals lose round 1; node 2's reply is lost: round 1 may hold it there. Its cleanup
    // goes there, then a sleep.
    run(acquire_event::from_node(event_type::answer, 1, 0, {}, denied), t0);
    run(acquire_event::from_node(event_type::answer, 1, 1, {}, denied), t0);
    run(acquire_event::from_node(event_type::answer, 1, 2, redlock::error::request_timeout), t0);
    BOOST_TEST_REQUIRE(sleep != 0u);
    (void)fsm.resume(acquire_event::from_node(event_type::cleanup_done, 0, 2), t0, rng);
    // Round 2, the last (its wait is over when it is lost): refused by nodes 0 and 1.
    const auto t1 = t0 + 1ms;
    (void)fsm.resume(acquire_event::sleep_ended_for(sleep), t1, rng);
    (void)fsm.resume(acquire_event::from_node(event_type::answer, 2, 0, {}, denied), t1, rng);
    (void)fsm.resume(acquire_event::from_node(event_type::answer, 2, 1, {}, denied), t1, rng);
    // Round 1's cleanup never ran on node 2: its key holds round 1's token.
    {
        const std::vector<redlock::resp::value> held{bulk_reply("tok-1"), integer_reply(29000)};
        bool freed = false;
        bool finished = false;
        for (const auto& a :
             fsm.resume(acquire_event::from_node(event_type::answer, 2, 2, {}, held), t1, rng)) {
            if (a.what == acquire_action::type::finish) {
                finished = true;
                BOOST_TEST((a.ec == redlock::error::wait_timeout));
            }
            if (a.what != acquire_action::type::send || a.reply || (a.nodes && !(*a.nodes)[2])) continue;
            for (auto arg : a.call->arg_span())
                freed = freed || arg == "tok-1";
        }
        BOOST_TEST(freed);
        BOOST_TEST(finished);
    }
}

BOOST_AUTO_TEST_SUITE_END()
