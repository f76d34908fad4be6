// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_LOCK_KINDS_SCRIPT_ANSWERS_HPP
#define REDLOCK_LOCK_KINDS_SCRIPT_ANSWERS_HPP

#include "lock/kinds/lock_kind.hpp"

#include <span>

namespace redlock::detail {

/// A script's reply of `size` integers (the shape of every multi-value answer of our scripts).
[[nodiscard]] bool is_integer_array(const resp::value& v, std::size_t size);

/// The single reply a script call owes; a default value when the call failed without one.
[[nodiscard]] const resp::value& script_reply(std::span<const resp::value> replies);

/// A failed vote: the script failed (`ec`: the transport, or an error reply), or answered in
/// a shape it never answers in (not `well_formed`).
[[nodiscard]] acquire_answer script_failed(boost::system::error_code ec, const resp::value& v);
[[nodiscard]] acquire_answer malformed(const resp::value& v);

/// A granting or denying vote.
[[nodiscard]] acquire_answer granted_answer();
[[nodiscard]] acquire_answer denied_answer();

/// The owner-checked release scripts' call: `owner` empty for a plain lock.
void release_call(const resource_keys& keys, std::string_view owner, std::string_view token, bool announce,
                  node_call& out);

}  // namespace redlock::detail

#endif
