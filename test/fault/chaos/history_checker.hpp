// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_TEST_FAULT_CHAOS_HISTORY_CHECKER_HPP
#define REDLOCK_TEST_FAULT_CHAOS_HISTORY_CHECKER_HPP

#include "fault/chaos/history.hpp"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace redlock::chaos {

/// A write the fenced store accepted, in the order it accepted them.
struct accepted_write {
    std::uint64_t fence = 0;
    std::string token;
    std::string lineage;  ///< the writing hold's (hold_record::lineage); empty: from the history
};

/// A broken rule and the smallest part of the history that shows it (two records, mostly),
/// each as its JSON line.
struct violation {
    std::string rule;
    std::string detail;
    std::vector<std::string> evidence;
};

/// Checks a history against a mutex with fencing (I/O-free):
/// - mutual_exclusion: no two holds of one resource overlap, a hold being
///   [acquired, min(ended, valid_until)], save two reads (kind "read") of a read-write lock (the
///   detail names the nodes that granted both, if any);
/// - permits_exceeded: no more than holders_allowed holds of a semaphore overlap;
/// - fence_order: of two holds of a resource, the one that started after the other ended has
///   the larger fence, or the same one if both are of one lineage (a reentrant lock's holds of
///   one owner; a hold and the holds adopted from it, by handed_from);
/// - reentry_fence: a re-entry that completed while its outer lease was valid got its fence;
/// - valid_write_refused: the store refused a write that completed while its lease was valid
///   (a newer fence was issued while it held);
/// - store_fences: the fences the store accepted never decrease, and two writes with one fence
///   come from one lineage;
/// - validity_too_long: a lease's validity, read at its body's start or end, never lies more
///   than the ttl ahead (a grant or a renewal starts no earlier than that moment): a hold's
///   interval rests on valid_until, and one too late would hide overlaps;
/// - validity_too_short: a grant's validity, read at its body's start, reaches at least
///   `invoked` + promised_ms: one too early would shrink holds until none can overlap;
/// - grant_without_quorum: every hold was granted by at least its quorum of distinct nodes (read
///   from hold_record::granted), whether or not a rival happened to overlap it;
/// - fence_missing: every hold of a fenced kind has a fence;
/// - watchdog_stopped / scopes_ended: every worker ended every scope and stopped every watchdog.
/// `workers`: how many summaries there must be (a worker that left none died uncleanly), but
/// from the workers in `killed` (the harness killed them on purpose).
[[nodiscard]] std::vector<violation> check_history(
    const history& h, const std::map<std::string, std::vector<accepted_write>>& store, int workers,
    const std::set<int>& killed = {});

/// Holds whose interval [acquired, min(ended, valid_until)] is not empty: the ones the rules can
/// judge (a client paused between its acquire and its body may have held nothing usable).
[[nodiscard]] std::size_t judged_holds(const history& h);

}  // namespace redlock::chaos

#endif
