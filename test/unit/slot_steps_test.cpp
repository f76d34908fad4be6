// SPDX-License-Identifier: BSL-1.0
// step_fold: how the replies of a lock over several resources, run slot by slot on a Redis
// Cluster node, make the reply its script gives on a single server. No server: the steps'
// replies are written out.
#include "lock/nodes/slot_steps.hpp"

#include "support/resp_values.hpp"
#include <redlock/error.hpp>

#include <boost/test/unit_test.hpp>

#include <vector>

using redlock::error;
using redlock::detail::step_fold;
using redlock::detail::step_merge;
using redlock::test::error_reply;
using redlock::test::integer_reply;
using redlock::test::integers_reply;
namespace resp = redlock::resp;

namespace {

// Three resources on two slots: the first step holds the whole call's resources 0 and 2.
const std::vector<std::vector<std::size_t>> two_steps{{0, 2}, {1}};

}  // namespace

BOOST_AUTO_TEST_SUITE(slot_steps_suite)

BOOST_AUTO_TEST_CASE(an_acquire_granted_on_every_step_is_granted_with_each_fence_in_its_place) {
    step_fold plain(step_merge::acquire_plain, two_steps);
    BOOST_TEST(plain.add(0, {}, integers_reply({1, 0})));
    BOOST_TEST(!plain.add(1, {}, integers_reply({1, 0})));
    BOOST_TEST(!plain.error());
    BOOST_TEST((plain.reply() == integers_reply({1, 0})));
    BOOST_TEST(plain.granted_to_undo() == 0u);

    step_fold fenced(step_merge::acquire_fenced, two_steps);
    BOOST_TEST(fenced.add(0, {}, integers_reply({1, 11, 13})));
    BOOST_TEST(!fenced.add(1, {}, integers_reply({1, 12})));
    BOOST_TEST((fenced.reply() == integers_reply({1, 11, 12, 13})));
    BOOST_TEST(fenced.granted_to_undo() == 0u);
}

BOOST_AUTO_TEST_CASE(an_acquire_refused_on_a_later_step_undoes_the_earlier_and_names_the_held_resource) {
    step_fold fold(step_merge::acquire_plain, {{1}, {0, 2}});
    BOOST_TEST(fold.add(0, {}, integers_reply({1, 0})));
    // The step's second resource is held: the whole call's third.
    BOOST_TEST(!fold.add(1, {}, integers_reply({0, 640, 2})));
    BOOST_TEST(!fold.error());
    BOOST_TEST((fold.reply() == integers_reply({0, 640, 3})));
    // The refused step wrote nothing; the one before granted.
    BOOST_TEST(fold.granted_to_undo() == 1u);

    // Refused at once: nothing to undo.
    step_fold first(step_merge::acquire_fenced, two_steps);
    BOOST_TEST(!first.add(0, {}, integers_reply({0, -1, 1})));
    BOOST_TEST((first.reply() == integers_reply({0, -1, 1})));
    BOOST_TEST(first.granted_to_undo() == 0u);
}

BOOST_AUTO_TEST_CASE(an_acquire_step_that_fails_or_answers_out_of_shape_is_undone_with_those_before_it) {
    // A timeout may have granted: that step is undone too.
    step_fold timed_out(step_merge::acquire_plain, two_steps);
    BOOST_TEST(timed_out.add(0, {}, integers_reply({1, 0})));
    BOOST_TEST(!timed_out.add(1, error::request_timeout, {}));
    BOOST_TEST((timed_out.error() == error::request_timeout));
    BOOST_TEST(timed_out.granted_to_undo() == 2u);

    step_fold server_error(step_merge::acquire_fenced, two_steps);
    BOOST_TEST(!server_error.add(0, error::server_error, error_reply("ERR oops")));
    BOOST_TEST((server_error.error() == error::server_error));
    BOOST_TEST((server_error.reply() == error_reply("ERR oops")));
    BOOST_TEST(server_error.granted_to_undo() == 1u);

    // Out of shape (a fence short; an index past the step's resources): passed on as it came,
    // for the kind to call malformed.
    for (const auto& odd : {integers_reply({1, 11}), integers_reply({0, 5, 3}), integer_reply(1)}) {
        step_fold fold(step_merge::acquire_fenced, two_steps);
        BOOST_TEST(!fold.add(0, {}, odd));
        BOOST_TEST(!fold.error());
        BOOST_TEST((fold.reply() == odd));
        BOOST_TEST(fold.granted_to_undo() == 1u);
    }
}

BOOST_AUTO_TEST_CASE(a_release_runs_every_step_and_says_whether_each_freed_all_of_its_own) {
    step_fold all(step_merge::release, two_steps);
    BOOST_TEST(all.add(0, {}, integer_reply(1)));
    BOOST_TEST(!all.add(1, {}, integer_reply(1)));
    BOOST_TEST((all.reply() == integer_reply(1)));

    // A step that freed less, or failed, does not stop the next.
    step_fold partly(step_merge::release, two_steps);
    BOOST_TEST(partly.add(0, {}, integer_reply(0)));
    BOOST_TEST(!partly.add(1, {}, integer_reply(1)));
    BOOST_TEST((partly.reply() == integer_reply(0)));

    step_fold failed(step_merge::release, two_steps);
    BOOST_TEST(failed.add(0, error::request_timeout, {}));
    BOOST_TEST(!failed.add(1, {}, integer_reply(1)));
    BOOST_TEST((failed.error() == error::request_timeout));
}

BOOST_AUTO_TEST_CASE(an_extend_stops_at_the_first_step_not_ours_and_a_check_gives_the_shortest_hold) {
    step_fold extended(step_merge::all_ones, two_steps);
    BOOST_TEST(extended.add(0, {}, integer_reply(1)));
    BOOST_TEST(!extended.add(1, {}, integer_reply(1)));
    BOOST_TEST((extended.reply() == integer_reply(1)));

    step_fold lost(step_merge::all_ones, two_steps);
    BOOST_TEST(!lost.add(0, {}, integer_reply(0)));
    BOOST_TEST((lost.reply() == integer_reply(0)));

    step_fold failed(step_merge::all_ones, two_steps);
    BOOST_TEST(!failed.add(0, error::server_error, error_reply("ERR x")));
    BOOST_TEST((failed.error() == error::server_error));

    step_fold shortest(step_merge::shortest_hold, two_steps);
    BOOST_TEST(shortest.add(0, {}, integer_reply(900)));
    BOOST_TEST(!shortest.add(1, {}, integer_reply(450)));
    BOOST_TEST((shortest.reply() == integer_reply(450)));

    // -1: that step's holds never expire; the other's still bounds the whole.
    step_fold endless(step_merge::shortest_hold, two_steps);
    BOOST_TEST(endless.add(0, {}, integer_reply(-1)));
    BOOST_TEST(!endless.add(1, {}, integer_reply(300)));
    BOOST_TEST((endless.reply() == integer_reply(300)));
    step_fold never(step_merge::shortest_hold, two_steps);
    BOOST_TEST(never.add(0, {}, integer_reply(-1)));
    BOOST_TEST(!never.add(1, {}, integer_reply(-1)));
    BOOST_TEST((never.reply() == integer_reply(-1)));

    step_fold not_held(step_merge::shortest_hold, two_steps);
    BOOST_TEST(!not_held.add(0, {}, integer_reply(0)));
    BOOST_TEST((not_held.reply() == integer_reply(0)));
}

BOOST_AUTO_TEST_SUITE_END()
