// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_LOCK_KINDS_KIND_MIXING_HPP
#define REDLOCK_LOCK_KINDS_KIND_MIXING_HPP

#include <redlock/lock_options.hpp>

#include <array>
#include <bitset>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace redlock::detail {

/// What an acquisition may ask of its lock, as far as which kinds mix goes.
enum class kind_trait : std::size_t { reentrant, fair, fenced, semaphore, read, write, several, count };
using kind_traits = std::bitset<static_cast<std::size_t>(kind_trait::count)>;

/// The traits `options` ask for; `several`: a lock over several resources at once.
[[nodiscard]] kind_traits traits_of(const lock_options& options, bool several) noexcept;

/// Traits that no kind has all together, the one to name first in front, and why.
struct kind_conflict {
    std::array<kind_trait, 3> traits{};
    std::size_t count = 0;
    std::string_view why;
};

/// The rules of which kinds mix, written once for the library (validate_lock_options) and the
/// command (its flags): the first rule `traits` break; none when some kind has them all.
[[nodiscard]] std::optional<kind_conflict> first_conflict(kind_traits traits) noexcept;

/// "<first>: not with <second> [and <third>] (<why>)", each trait by `name` (the library's
/// lock_options fields, the command's flags).
template <class Name>
[[nodiscard]] std::string describe(const kind_conflict& c, Name name) {
    std::string text = std::string(name(c.traits[0])) + ": not with " + std::string(name(c.traits[1]));
    for (std::size_t i = 2; i < c.count; ++i)
        text += " and " + std::string(name(c.traits[i]));
    return text + " (" + std::string(c.why) + ")";
}

}  // namespace redlock::detail

#endif
