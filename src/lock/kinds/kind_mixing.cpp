// SPDX-License-Identifier: BSL-1.0
#include "lock/kinds/kind_mixing.hpp"

#include <initializer_list>

namespace redlock::detail {

namespace {

struct mixing_rule {
    std::initializer_list<kind_trait> together;  // not all of these; the first is named first
    std::string_view why;
};

using t = kind_trait;
constexpr std::string_view plain_only = "only a plain lock (fenced or not) takes several resources";

// Every combination no kind implements. A kind's scripts are written for one shape of key (a
// string, a hash of owners, a queue, a sorted set of permits or of readers): what another kind
// would add to it has no place there.
const mixing_rule rules[] = {
    {{t::several, t::reentrant}, plain_only},
    {{t::several, t::fair}, plain_only},
    {{t::several, t::semaphore}, plain_only},
    {{t::several, t::read}, plain_only},
    {{t::several, t::write}, plain_only},
    {{t::semaphore, t::fenced}, "a semaphore's holders are not numbered"},
    {{t::semaphore, t::reentrant}, "a semaphore's permits have no owner"},
    {{t::semaphore, t::fair}, "a semaphore's waiters do not queue"},
    {{t::semaphore, t::read}, "a semaphore is not a read-write lock"},
    {{t::semaphore, t::write}, "a semaphore is not a read-write lock"},
    {{t::fair, t::reentrant}, "a fair lock's queue has places, not owners"},
    {{t::read, t::fair}, "a read-write lock's waiters do not queue"},
    {{t::write, t::fair}, "a read-write lock's waiters do not queue"},
    {{t::fenced, t::read}, "readers are not numbered; fence the writer"},
    {{t::fenced, t::write, t::reentrant}, "a reentrant writer's holds are not numbered"},
};

bool has(kind_traits traits, kind_trait trait) noexcept {
    return traits.test(static_cast<std::size_t>(trait));
}

}  // namespace

kind_traits traits_of(const lock_options& o, bool several) noexcept {
    kind_traits traits;
    const auto set = [&](kind_trait trait, bool on) { traits.set(static_cast<std::size_t>(trait), on); };
    set(t::reentrant, o.reentrant);
    set(t::fair, o.fair);
    set(t::fenced, o.fenced);
    set(t::semaphore, o.permits > 0);
    set(t::read, o.mode == lock_mode::read);
    set(t::write, o.mode == lock_mode::write);
    set(t::several, several);
    return traits;
}

std::optional<kind_conflict> first_conflict(kind_traits traits) noexcept {
    for (const auto& rule : rules) {
        bool all = true;
        for (auto trait : rule.together)
            all = all && has(traits, trait);
        if (!all) continue;
        kind_conflict c;
        for (auto trait : rule.together)
            c.traits[c.count++] = trait;
        c.why = rule.why;
        return c;
    }
    return std::nullopt;
}

}  // namespace redlock::detail
