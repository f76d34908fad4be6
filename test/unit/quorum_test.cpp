// SPDX-License-Identifier: BSL-1.0
// The I/O-free parts of the algorithm: quorum size, validity arithmetic, the vote tally's
// decisions, retry delays, tokens and key names.
#include "lock/acquire/quorum.hpp"

#include "lock/acquire/retry_delay.hpp"
#include "lock/client/resource_keys.hpp"
#include "lock/client/token.hpp"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <random>
#include <set>
#include <string>

#include <sys/wait.h>
#include <unistd.h>

using namespace std::chrono_literals;
using redlock::detail::quorum_of;
using redlock::detail::round_state;
using redlock::detail::validity_left;
using redlock::detail::vote;
using redlock::detail::vote_tally;

BOOST_AUTO_TEST_SUITE(quorum_test)

BOOST_AUTO_TEST_CASE(quorum_is_a_strict_majority) {
    BOOST_TEST(quorum_of(1) == 1u);
    BOOST_TEST(quorum_of(2) == 2u);
    BOOST_TEST(quorum_of(3) == 2u);
    BOOST_TEST(quorum_of(4) == 3u);
    BOOST_TEST(quorum_of(5) == 3u);
    BOOST_TEST(quorum_of(7) == 4u);
    // Any two quorums intersect: q + q > n for every n.
    for (std::size_t n = 1; n < 100; ++n)
        BOOST_TEST(2 * quorum_of(n) > n);
}

BOOST_AUTO_TEST_CASE(validity_subtracts_elapsed_time_and_drift) {
    // 10 s ttl, 1 % drift: 100 ms + 2 ms allowance.
    BOOST_TEST((validity_left(10000ms, 0ms, 0.01) == 9898ms));
    BOOST_TEST((validity_left(10000ms, 500ms, 0.01) == 9398ms));
    BOOST_TEST((validity_left(10000ms, 0ms, 0.0) == 9998ms));
    // Fractions of a millisecond of drift are kept, not rounded away.
    BOOST_TEST((validity_left(150ms, 0ms, 0.01) == 146500us));
    // A quorum that took longer than the ttl leaves a negative validity.
    BOOST_TEST((validity_left(20ms, 30ms, 0.01) < 0ms));
    BOOST_TEST((validity_left(100ms, 97ms, 0.01) == 0ms));
    BOOST_TEST((validity_left(100ms, 98ms, 0.01) < 0ms));
}

BOOST_AUTO_TEST_CASE(a_round_is_won_as_soon_as_a_quorum_granted) {
    vote_tally t(5);
    BOOST_TEST((t.add(vote::granted) == round_state::pending));
    BOOST_TEST((t.add(vote::failed) == round_state::pending));
    BOOST_TEST((t.add(vote::granted) == round_state::pending));
    BOOST_TEST((t.add(vote::granted) == round_state::won));
    BOOST_TEST(!t.all_answered());
    // Later votes do not change a decided round.
    BOOST_TEST((t.add(vote::denied) == round_state::won));
    BOOST_TEST(t.all_answered());
    BOOST_TEST(t.granted() == 3u);
}

BOOST_AUTO_TEST_CASE(a_round_is_lost_as_soon_as_a_quorum_is_impossible) {
    vote_tally contended(5);
    contended.add(vote::denied);
    contended.add(vote::granted);
    // Two denials: the two nodes left could still make three grants.
    BOOST_TEST((contended.add(vote::denied) == round_state::pending));
    BOOST_TEST((contended.add(vote::denied) == round_state::denied));
    vote_tally mixed(5);
    mixed.add(vote::failed);
    mixed.add(vote::failed);
    // Two failures and a denial: no quorum, but only N - quorum nodes failed: contention.
    BOOST_TEST((mixed.add(vote::denied) == round_state::denied));
    vote_tally down(5);
    down.add(vote::failed);
    down.add(vote::granted);
    down.add(vote::failed);
    BOOST_TEST((down.add(vote::failed) == round_state::unreachable));
}

BOOST_AUTO_TEST_CASE(one_node_is_the_same_rule) {
    vote_tally g(1), d(1), f(1);
    BOOST_TEST((g.add(vote::granted) == round_state::won));
    BOOST_TEST((d.add(vote::denied) == round_state::denied));
    BOOST_TEST((f.add(vote::failed) == round_state::unreachable));
}

BOOST_AUTO_TEST_CASE(every_order_of_votes_decides_as_the_counts_allow) {
    // For N = 5, every combination of votes in every order: the round is won exactly when three
    // granted, decided by the time all answered, and unreachable only when three failed (a round
    // lost early to denials stays `denied` even if more failures follow).
    const vote kinds[] = {vote::granted, vote::denied, vote::failed};
    for (int code = 0; code < 243; ++code) {
        std::vector<vote> votes;
        for (int c = code, i = 0; i < 5; ++i, c /= 3)
            votes.push_back(kinds[c % 3]);
        std::size_t g = 0, f = 0;
        for (auto v : votes) {
            g += v == vote::granted;
            f += v == vote::failed;
        }
        std::sort(votes.begin(), votes.end());
        do {
            vote_tally t(5);
            round_state first = round_state::pending;
            for (auto v : votes) {
                auto s = t.add(v);
                if (first == round_state::pending) first = s;
            }
            BOOST_TEST(((first == round_state::won) == (g >= 3)));
            BOOST_TEST((first != round_state::pending));
            if (first == round_state::unreachable) BOOST_TEST(f > 2u);
            if (first == round_state::denied) BOOST_TEST(g < 3u);
        } while (std::next_permutation(votes.begin(), votes.end()));
    }
}

BOOST_AUTO_TEST_CASE(retry_delays_stay_in_range_and_within_the_wait) {
    std::mt19937_64 rng(42);
    redlock::retry_config r{50ms, 250ms};
    std::set<long> seen;
    for (int i = 0; i < 2000; ++i) {
        auto d = redlock::detail::retry_delay(r, 10s, rng);
        BOOST_TEST((d >= 50ms));
        BOOST_TEST((d <= 250ms));
        seen.insert(static_cast<long>(d.count()));
    }
    // Jitter: the delays are spread over the range, not one value.
    BOOST_TEST(seen.size() > 100u);
    BOOST_TEST((redlock::detail::retry_delay(r, 30ms, rng) == 30ms));
    BOOST_TEST((redlock::detail::retry_delay(redlock::retry_config{0ms, 0ms}, 1s, rng) == 0ms));
}

BOOST_AUTO_TEST_CASE(tokens_are_128_random_bits_in_hex) {
    std::set<std::string> tokens;
    for (int i = 0; i < 1000; ++i) {
        auto t = redlock::detail::make_token();
        BOOST_TEST(t.size() == 32u);
        BOOST_TEST(t.find_first_not_of("0123456789abcdef") == std::string::npos);
        tokens.insert(t);
    }
    BOOST_TEST(tokens.size() == 1000u);
}

// Tokens come from a per-thread pool of the OS's bytes: a forked child must not hand out the
// bytes its parent hands out next (two processes, one token).
BOOST_AUTO_TEST_CASE(a_forked_child_makes_tokens_of_its_own) {
    (void)redlock::detail::make_token();  // the pool holds bytes for more tokens now
    int fds[2];
    BOOST_TEST_REQUIRE(::pipe(fds) == 0);
    const pid_t child = ::fork();
    BOOST_TEST_REQUIRE(child >= 0);
    if (child == 0) {
        const auto t = redlock::detail::make_token();
        const auto written = ::write(fds[1], t.data(), t.size());
        ::_exit(written == static_cast<ssize_t>(t.size()) ? 0 : 1);
    }
    ::close(fds[1]);
    const auto ours = redlock::detail::make_token();
    std::string theirs(32, '\0');
    std::size_t got = 0;
    while (got < theirs.size()) {
        const auto n = ::read(fds[0], theirs.data() + got, theirs.size() - got);
        if (n <= 0) break;
        got += static_cast<std::size_t>(n);
    }
    ::close(fds[0]);
    int status = 0;
    ::waitpid(child, &status, 0);
    BOOST_TEST_REQUIRE(got == theirs.size());
    BOOST_TEST(WIFEXITED(status));
    BOOST_TEST(theirs.find_first_not_of("0123456789abcdef") == std::string::npos);
    BOOST_TEST(theirs != ours);
}

BOOST_AUTO_TEST_CASE(keys_of_a_resource_share_one_hash_tag) {
    auto k = redlock::detail::keys_for("redlock:", "orders:42");
    BOOST_TEST(k.lock == "{redlock:orders:42}:lock");
    BOOST_TEST(k.released == "{redlock:orders:42}:released");
    auto empty_prefix = redlock::detail::keys_for("", "r");
    BOOST_TEST(empty_prefix.lock == "{r}:lock");
}

BOOST_AUTO_TEST_SUITE_END()
