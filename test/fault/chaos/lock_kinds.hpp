// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_TEST_FAULT_CHAOS_LOCK_KINDS_HPP
#define REDLOCK_TEST_FAULT_CHAOS_LOCK_KINDS_HPP

#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::chaos {

/// The kinds of lock the workers take. Unfenced kinds run on the "plain" deployment, whose
/// nodes 0-2 have no persistence (a restart loses their keys: the restart quarantine must cover
/// it); fenced kinds run on the "fenced" deployment, all AOF with fsync always, as fences need
/// counters that survive a restart (docs/safety.md).
/// A read-write lock's scopes read, or write one time in four; a semaphore's take one of
/// `permits`.
struct lock_kind {
    std::string_view name;
    bool fenced;
    bool reentrant;
    bool fair;
    bool read_write;
    int permits;
};

inline constexpr std::array<lock_kind, 8> lock_kinds = {{
    {"plain", false, false, false, false, 0},
    {"reentrant", false, true, false, false, 0},
    {"fair", false, false, true, false, 0},
    {"read_write", false, false, false, true, 0},
    {"semaphore", false, false, false, false, 2},
    {"fenced", true, false, false, false, 0},
    {"fenced_reentrant", true, true, false, false, 0},
    {"fenced_fair", true, false, true, false, 0},
}};

/// Resource "<kind>:<index>".
inline std::string resource_name(const lock_kind& kind, int index) {
    return std::string(kind.name) + ":" + std::to_string(index);
}

/// The kind of a resource named by resource_name().
inline const lock_kind& kind_of(std::string_view resource) {
    const auto name = resource.substr(0, resource.find(':'));
    for (const auto& k : lock_kinds)
        if (k.name == name) return k;
    return lock_kinds[0];
}

/// Keys of the workers' clients (prefix "chaos:") that are not locks: the fence counters
/// (kept for good, so that fences never go back), the recorded max_ttl (kept for good, for the
/// restart quarantine) and the failover quarantine's marks and recorded length (failover_mark.lua).
inline bool bookkeeping_key(std::string_view k) {
    return k.ends_with(":fence") || k == "{chaos:}:max_ttl" ||
           (k.starts_with("{chaos:failover:") &&
            (k.ends_with("}:mark") || k.ends_with("}:replicaof") || k.ends_with("}:length")));
}

inline std::vector<std::string> all_resources(int per_kind) {
    std::vector<std::string> out;
    for (const auto& kind : lock_kinds)
        for (int i = 0; i < per_kind; ++i)
            out.push_back(resource_name(kind, i));
    return out;
}

}  // namespace redlock::chaos

#endif
