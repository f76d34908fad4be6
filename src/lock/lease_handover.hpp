// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_LOCK_LEASE_HANDOVER_HPP
#define REDLOCK_LOCK_LEASE_HANDOVER_HPP

#include "lock/client_state.hpp"
#include "lock/lease_state.hpp"
#include <redlock/diagnostics.hpp>
#include <redlock/lease.hpp>
#include <redlock/lock_options.hpp>

#include <boost/asio/any_completion_handler.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace redlock::detail {

/// What a lease written out for another process says (lease::handover, client::async_adopt).
struct handover_record {
    std::string resource;
    std::vector<std::string> resources;  ///< kind "several": the resources, sorted; else empty
    std::string token;
    std::uint64_t fence = 0;
    std::vector<std::uint64_t> fences;  ///< kind "several", fenced: one per resource
    std::string place;                  ///< a fair lock's place in its queue
    /// The kind's fields (reentrant and owner, fair, permits, mode, fenced); the rest is the
    /// adopter's.
    lock_options kind;
};

/// The JSON text of `state`'s lease: {"redlock_lease": 1, "resource", "kind" ("lock",
/// "reentrant", "fair", "semaphore", "read", "write", "several"), "token", "fence", "fenced",
/// "owner", "place", "permits"}, and "resources" (a list of names) for kind "several".
[[nodiscard]] std::string handover_text(const lease_state& state);

/// Reads handover_text's output; false with `why` for any other text.
[[nodiscard]] bool parse_handover(std::string_view text, handover_record& out, std::string& why);

using adopt_handler = boost::asio::any_completion_handler<void(boost::system::error_code, lease)>;

/// client::async_adopt: the record's kind with the adopter's `options`, one extend to `ttl` on
/// every node, decided by quorum within the validity it gives; a lease (with its watchdog, if
/// asked) when a quorum confirmed.
void start_adopt(std::shared_ptr<client_state> client, std::string text, lock_options options,
                 diagnostics* diag, adopt_handler handler);

}  // namespace redlock::detail

#endif
