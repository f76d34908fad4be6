// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_LOCK_KINDS_HANDOVER_RECORD_HPP
#define REDLOCK_LOCK_KINDS_HANDOVER_RECORD_HPP

#include <redlock/lock_options.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::detail {

struct lease_state;

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

/// The adopter's `options` with the kind of `record`'s lease: the kind's fields are the lease's;
/// how it is kept (ttl, watchdog, timeouts) is the adopter's, and so is a reentrant hold's owner
/// from now on (its own, or a new random one): the first process, acquiring again under its
/// owner, must not re-enter the adopter's hold. An adoption never waits. Throws what
/// owner_id::random() throws.
void take_kind_of(const handover_record& record, lock_options& options);

/// Reads handover_text's output; false with `why` for any other text.
[[nodiscard]] bool parse_handover(std::string_view text, handover_record& out, std::string& why);

}  // namespace redlock::detail

#endif
