// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_INSPECTION_HPP
#define REDLOCK_INSPECTION_HPP

#include <redlock/export.hpp>

#include <boost/system/error_code.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace redlock {

/// What the lock key of a resource is on one node.
enum class hold_type {
    free,        ///< no key: nothing holds the resource there
    lock,        ///< a plain or fair lock (a string holding the holder's token)
    reentrant,   ///< a reentrant lock (a hash: its owner and its acquisitions)
    semaphore,   ///< a semaphore (a sorted set of permits)
    read_write,  ///< a read-write lock (a sorted set of holds, and a hash of their modes)
    other,       ///< a key of a type none of our locks writes
};

/// "free", "lock", "reentrant", "semaphore", "read-write", "other".
[[nodiscard]] REDLOCK_API const char* hold_type_name(hold_type t) noexcept;

/// One node's view of a resource (client::async_inspect).
struct REDLOCK_API node_inspection {
    std::string node;                 ///< its name, as in diagnostics
    boost::system::error_code error;  ///< the node did not answer (the rest is empty)
    std::string detail;               ///< the server's words with `error`, if any
    hold_type type = hold_type::free;
    std::int64_t pttl_ms = -2;  ///< the lock key's time to live: -2 no key, -1 no expiry
    /// A lock's token (a fair lock's: its place and token); a reentrant lock's acquisitions'
    /// tokens; a semaphore's live permits' tokens; a read-write lock's live holds' tokens.
    std::vector<std::string> holders;
    std::vector<std::string> writers;  ///< a read-write lock's holders that write
    std::string owner;                 ///< a reentrant lock's owner id
    std::uint64_t fence = 0;           ///< the resource's fence counter on this node (0: none)
    std::int64_t queued = 0;   ///< fair waiters queued on this node; a read-write lock's waiting writers
    std::int64_t permits = 0;  ///< a semaphore's count of permits (0: not a semaphore)
};

/// A resource as the nodes see it, and what a quorum of them agree on.
struct REDLOCK_API inspection {
    std::string resource;
    std::size_t quorum = 0;              ///< N / 2 + 1
    std::vector<node_inspection> nodes;  ///< in the order of client_config::nodes
    /// The holders a quorum of nodes list: those the lock counts as holding the resource.
    std::vector<std::string> holders;
    std::string owner;        ///< a reentrant owner a quorum of nodes list; empty if none
    std::uint64_t fence = 0;  ///< the largest fence counter of any node
    [[nodiscard]] bool held() const noexcept { return !holders.empty(); }
};

/// Who holds, as the client that took the hold recorded it in its token
/// (client_config::identify_holder, lock_options::label).
struct REDLOCK_API holder_identity {
    std::string host;  ///< the host name of the holder's machine
    std::int64_t pid = 0;
    std::string label;  ///< lock_options::label; empty if none
    friend bool operator==(const holder_identity&, const holder_identity&) = default;
};

/// The identity recorded in `holder` (a token as lease::token() gives it, or a holder as an
/// inspection lists it, a fair lock's "<place>.<round>" included); empty for a token that
/// records none (a client with identify_holder off) or a value none of our clients wrote.
[[nodiscard]] REDLOCK_API std::optional<holder_identity> identity_of(std::string_view holder);

/// The inspection as a JSON object (the shape `redlock inspect --json` prints).
[[nodiscard]] REDLOCK_API std::string to_json(const inspection& i);

}  // namespace redlock

#endif
