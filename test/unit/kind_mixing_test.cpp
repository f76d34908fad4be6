// SPDX-License-Identifier: BSL-1.0
// Which kinds of lock mix: one table of rules (kinds/kind_mixing) that the library's option check
// and the command's flags both use. Checked against the kinds that exist, listed here on their
// own: every combination of traits is refused exactly when no kind has it.
#include "lock/kinds/kind_mixing.hpp"

#include "lock/acquire/lock_options_check.hpp"
#include "lock/kinds/lock_kind.hpp"
#include <redlock/error.hpp>

#include <boost/test/unit_test.hpp>

#include <set>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using redlock::lock_mode;
using redlock::lock_options;
using redlock::detail::kind_trait;
using redlock::detail::kind_traits;
using t = kind_trait;

namespace {

constexpr std::size_t trait_count = static_cast<std::size_t>(kind_trait::count);

kind_traits traits(std::initializer_list<kind_trait> list) {
    kind_traits out;
    for (auto x : list)
        out.set(static_cast<std::size_t>(x));
    return out;
}

// The kinds there are, each with what it may add (fenced, an owner).
const std::vector<kind_traits>& kinds_there_are() {
    static const std::vector<kind_traits> kinds{
        traits({}),                         // plain
        traits({t::fenced}),                // plain, fenced
        traits({t::reentrant}),             // reentrant
        traits({t::reentrant, t::fenced}),  // reentrant, fenced
        traits({t::fair}),                  // fair
        traits({t::fair, t::fenced}),       // fair, fenced
        traits({t::semaphore}),             // semaphore
        traits({t::read}),                  // reader
        traits({t::read, t::reentrant}),    // reader with an owner
        traits({t::write}),                 // writer
        traits({t::write, t::fenced}),      // writer, fenced
        traits({t::write, t::reentrant}),   // writer with an owner
        traits({t::several}),               // several resources
        traits({t::several, t::fenced}),    // several resources, fenced
    };
    return kinds;
}

bool a_kind_has(kind_traits asked) {
    for (const auto& k : kinds_there_are())
        if (k == asked) return true;
    return false;
}

std::string_view short_name(kind_trait trait) {
    static const char* names[] = {"reentrant", "fair", "fenced", "semaphore", "read", "write", "several"};
    return names[static_cast<std::size_t>(trait)];
}

// Options asking for `asked`, the one-resource traits only; a valid request otherwise.
lock_options options_for(kind_traits asked) {
    lock_options o;
    o.ttl = 1000ms;
    const auto on = [&](kind_trait x) { return asked.test(static_cast<std::size_t>(x)); };
    o.reentrant = on(t::reentrant);
    if (o.reentrant) o.owner = redlock::owner_id("me");
    o.fair = on(t::fair);
    o.fenced = on(t::fenced);
    o.permits = on(t::semaphore) ? 3 : 0;
    // Read and write together is no request the options can make: mode is one of them.
    o.mode = on(t::read) ? lock_mode::read : on(t::write) ? lock_mode::write : lock_mode::exclusive;
    return o;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kind_mixing_test)

BOOST_AUTO_TEST_CASE(every_combination_is_refused_exactly_when_no_kind_has_it) {
    std::size_t refused = 0;
    for (unsigned long bits = 0; bits < (1ul << trait_count); ++bits) {
        const kind_traits asked(bits);
        const auto conflict = redlock::detail::first_conflict(asked);
        // A reader that writes is no kind either; no rule is needed for it, as no request has both.
        const bool read_and_write =
            asked.test(static_cast<std::size_t>(t::read)) && asked.test(static_cast<std::size_t>(t::write));
        if (read_and_write) continue;
        BOOST_TEST(conflict.has_value() == !a_kind_has(asked), asked.to_string());
        if (!conflict) continue;
        ++refused;
        // It names traits that were asked for, at least two, and says why.
        BOOST_TEST(conflict->count >= 2u);
        for (std::size_t i = 0; i < conflict->count; ++i)
            BOOST_TEST(asked.test(static_cast<std::size_t>(conflict->traits[i])), asked.to_string());
        BOOST_TEST(!conflict->why.empty());
    }
    BOOST_TEST(refused > 0u);
}

BOOST_AUTO_TEST_CASE(the_library_refuses_what_the_rules_refuse_and_builds_every_kind_they_allow) {
    const redlock::client_config cfg;
    for (unsigned long bits = 0; bits < (1ul << trait_count); ++bits) {
        const kind_traits asked(bits);
        if (asked.test(static_cast<std::size_t>(t::several)) ||
            (asked.test(static_cast<std::size_t>(t::read)) && asked.test(static_cast<std::size_t>(t::write))))
            continue;
        const auto o = options_for(asked);
        std::string why;
        const auto ec = redlock::detail::validate_lock_options(cfg, "r", o, why);
        if (a_kind_has(asked)) {
            BOOST_TEST(!ec, asked.to_string() << ": " << why);
            BOOST_TEST(redlock::detail::make_lock_kind(redlock::detail::keys_for("p", "r"), o, "place") !=
                       nullptr);
        } else {
            BOOST_TEST((ec == redlock::error::invalid_config), asked.to_string());
            BOOST_TEST(why.find(": not with ") != std::string::npos, why);
        }
    }
}

BOOST_AUTO_TEST_CASE(a_conflict_is_said_in_the_callers_words) {
    const auto c = redlock::detail::first_conflict(traits({t::semaphore, t::fenced}));
    BOOST_TEST_REQUIRE(c.has_value());
    BOOST_TEST(redlock::detail::describe(*c, short_name) ==
               "semaphore: not with fenced (a semaphore's holders are not numbered)");
    const auto three = redlock::detail::first_conflict(traits({t::write, t::reentrant, t::fenced}));
    BOOST_TEST_REQUIRE(three.has_value());
    BOOST_TEST(redlock::detail::describe(*three, short_name) ==
               "fenced: not with write and reentrant (a reentrant writer's holds are not numbered)");
    const auto several = redlock::detail::first_conflict(traits({t::several, t::read}));
    BOOST_TEST_REQUIRE(several.has_value());
    BOOST_TEST(redlock::detail::describe(*several, short_name) ==
               "several: not with read (only a plain lock (fenced or not) takes several resources)");
}

BOOST_AUTO_TEST_SUITE_END()
