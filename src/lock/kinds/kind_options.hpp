// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_LOCK_KINDS_KIND_OPTIONS_HPP
#define REDLOCK_LOCK_KINDS_KIND_OPTIONS_HPP

#include "lock/kinds/kind_mixing.hpp"
#include <redlock/lock_options.hpp>

#include <boost/system/error_code.hpp>

#include <string>
#include <string_view>

namespace redlock::detail {

/// The lock_options field that asks for `trait`, as messages name it.
[[nodiscard]] std::string_view kind_option_name(kind_trait trait) noexcept;

/// The options that choose the lock's kind, and each kind's own: an owner with reentrant and
/// only with it, a count of permits in range, a queue_timeout a queue can live with, and kinds
/// that mix (`several`: a lock over several resources at once). invalid_config, with what is
/// wrong in `why`; nothing when they are fine.
[[nodiscard]] boost::system::error_code check_kind_options(const lock_options& options, bool several,
                                                           std::string& why);

}  // namespace redlock::detail

#endif
