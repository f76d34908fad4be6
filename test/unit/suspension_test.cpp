// SPDX-License-Identifier: BSL-1.0
// A lease's validity after the machine slept (suspension.hpp, lease_state::valid_until_time):
// the steady clock stops in a suspension while the ttls on the servers run on, so the time slept
// since the round that gave the validity began comes off it. A fake reading of the time slept
// plays the suspension.
#include "lock/client/suspension.hpp"

#include "lock/lease/lease_lifecycle.hpp"
#include "lock/lease/lease_state.hpp"
#include <redlock/lease.hpp>

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <memory>

using namespace std::chrono_literals;
using redlock::detail::lease_phase;
using redlock::detail::lease_state;
using redlock::detail::less_suspension;
using clock_type = std::chrono::steady_clock;

namespace {

std::chrono::nanoseconds fake_slept{0};
std::chrono::nanoseconds fake_suspension() noexcept {
    return fake_slept;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(suspension_test)

BOOST_AUTO_TEST_CASE(the_time_slept_since_the_round_began_comes_off_the_validity) {
    const auto t = clock_type::time_point(100s);
    BOOST_TEST((less_suspension(t, 2s, 2s) == t));
    BOOST_TEST((less_suspension(t, 2s, 2s + 900us) == t));  // the two clocks' reading jitter
    BOOST_TEST((less_suspension(t, 2s, 2s - 500us) == t));
    BOOST_TEST((less_suspension(t, 2s, 7s) == t - 5s));
    BOOST_TEST((less_suspension(t, 0s, 1h) == t - 1h));  // slept past it: in the past now
}

BOOST_AUTO_TEST_CASE(a_lease_that_slept_through_its_validity_has_none_left) {
    auto state = std::make_shared<lease_state>();
    state->suspension = &fake_suspension;
    fake_slept = 3s;  // slept before the round: none of it counts
    const auto now = clock_type::now();
    state->set_valid_until(now + 10s, 3s);
    BOOST_TEST((state->valid_until_time() == now + 10s));
    fake_slept = 7s;  // 4 s asleep since the round began
    BOOST_TEST((state->valid_until_time() == now + 6s));
    fake_slept = 20s;
    // What the holder sees: no time left, although the steady clock did not move.
    (void)state->fsm.leave(
        redlock::detail::lease_event::release_called);  // nothing to release when the test's lease goes
    redlock::lease held(state);
    BOOST_TEST((held.valid_until() == now - 7s));
    BOOST_TEST((held.remaining() == clock_type::duration::zero()));
    fake_slept = 0s;
}

// The difference of the two clocks is what counts, not its value: in a container's time
// namespace either clock may be offset.
BOOST_AUTO_TEST_CASE(the_time_slept_is_read_from_the_two_clocks_and_never_goes_back) {
    const auto first = redlock::detail::suspended_so_far();
    const auto second = redlock::detail::suspended_so_far();
    BOOST_TEST((second - first > -1ms));
    BOOST_TEST((second - first < 1ms));  // no suspension between two readings
}

BOOST_AUTO_TEST_SUITE_END()
