// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_LOCK_KINDS_KIND_CHOICE_HPP
#define REDLOCK_LOCK_KINDS_KIND_CHOICE_HPP

#include "lock/kinds/lock_kind.hpp"
#include <redlock/lock_options.hpp>

#include <boost/system/error_code.hpp>

#include <memory>
#include <string>
#include <vector>

namespace redlock::detail {

class client_state;

/// The lock kind that an acquisition, or an adopted lease, of `resource` runs with; of
/// `resources` when it holds several at once (then `resource` is their names joined). Every
/// check of the request against this client comes first, so that an acquire and an adopt refuse
/// the same things: the options (validate_lock_options, validate_several_resources), several
/// resources with replicas on a Redis Cluster (which spreads them over slots, and so over
/// masters), and two nodes that are one server. `place`: a fair lock's member in its queue (an
/// adopted lease's); empty: a new one, for the whole acquisition. On failure, the
/// error and `why` (a sentence for the caller), and no kind.
[[nodiscard]] boost::system::error_code choose_lock_kind(
    const client_state& client, const std::string& resource, const std::vector<std::string>& resources,
    const lock_options& options, std::string place, std::shared_ptr<const lock_kind>& kind, std::string& why);

}  // namespace redlock::detail

#endif
