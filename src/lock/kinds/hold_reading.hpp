// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_LOCK_KINDS_HOLD_READING_HPP
#define REDLOCK_LOCK_KINDS_HOLD_READING_HPP

#include <redlock/inspection.hpp>
#include <redlock/resp/value.hpp>

namespace redlock::detail {

/// One node's answer to inspect.lua, read into `out` (whose `node` is set): what kind of hold
/// the resource's keys show, and each kind's own fields of it. False when the reply has a
/// shape the script never answers in.
[[nodiscard]] bool read_node_inspection(const resp::value& reply, node_inspection& out);

}  // namespace redlock::detail

#endif
