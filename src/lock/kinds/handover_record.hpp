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

/// Reads handover_text's output; false with `why` for any other text.
[[nodiscard]] bool parse_handover(std::string_view text, handover_record& out, std::string& why);

}  // namespace redlock::detail

#endif
