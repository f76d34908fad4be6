// SPDX-License-Identifier: BSL-1.0
#include "fault/chaos/history_checker.hpp"

#include <algorithm>
#include <charconv>
#include <set>
#include <string_view>
#include <system_error>
#include <utility>

namespace redlock::chaos {

namespace {

nanos hold_end(const hold_record& h) {
    return std::min(h.ended, h.valid_until);
}

// Holds of each resource whose interval is not empty (a client paused between its acquire and
// its body may find its validity already gone: it held nothing it could use).
std::map<std::string, std::vector<const hold_record*>> holds_by_resource(const history& h) {
    std::map<std::string, std::vector<const hold_record*>> out;
    for (const auto& hold : h.holds)
        if (hold_end(hold) > hold.acquired) out[hold.resource].push_back(&hold);
    for (auto& [resource, holds] : out)
        std::sort(holds.begin(), holds.end(),
                  [](const hold_record* a, const hold_record* b) { return a->acquired < b->acquired; });
    return out;
}

// What one fence belongs to: holds of one lineage may share it. A reentrant lock's holds of one
// owner (the worker's "w<worker>c<coroutine>") are one hold on the servers while any of them is
// there: an owner whose release did not land re-enters what it left, fence and all. A hold
// adopted from another (handed_from) continues that hold, with its fence and a token of its own.
// The workers record each hold's (hold_record::lineage), as the store does each write's: a
// worker killed before it wrote its record leaves its writes in the store. Where it is not
// recorded, it is worked out from the history.
class lineages {
public:
    explicit lineages(const history& h) {
        for (const auto& hold : h.holds)
            by_token_.emplace(hold.token, &hold);
    }

    [[nodiscard]] std::string of(const hold_record& h) const {
        if (!h.lineage.empty()) return h.lineage;
        const hold_record* root = &h;
        // Bounded: a chain of hand-overs never loops, a malformed history must not hang us.
        for (std::size_t hops = 0; !root->handed_from.empty() && hops < by_token_.size(); ++hops) {
            const auto it = by_token_.find(root->handed_from);
            if (it == by_token_.end()) break;
            root = it->second;
        }
        if (root->kind.find("reentrant") != std::string::npos)
            return owner_lineage(root->worker, root->coroutine);
        return token_lineage(root->token);
    }

    [[nodiscard]] std::string of(const accepted_write& w) const {
        if (!w.lineage.empty()) return w.lineage;
        const auto it = by_token_.find(w.token);
        return it == by_token_.end() ? token_lineage(w.token) : of(*it->second);
    }

private:
    std::map<std::string, const hold_record*> by_token_;
};

// The node indices of hold_record::granted ("0,2,3", then any " via host:port"). An item that
// does not read as an index is left out: a malformed record grants less, never more.
std::set<std::uint64_t> granting_nodes(const hold_record& h) {
    std::set<std::uint64_t> out;
    const std::string_view list = std::string_view(h.granted).substr(0, h.granted.find(' '));
    for (std::size_t start = 0; start < list.size();) {
        const auto end = std::min(list.find(',', start), list.size());
        const auto item = list.substr(start, end - start);
        std::uint64_t n = 0;
        const auto [rest, ec] = std::from_chars(item.data(), item.data() + item.size(), n);
        if (!item.empty() && ec == std::errc{} && rest == item.data() + item.size()) out.insert(n);
        start = end + 1;
    }
    return out;
}

// Two holds that overlap were granted either by quorums that meet, whose common nodes granted
// twice (they forgot the first grant: a restart, a failover), or by sets that do not (the
// client took less than a quorum): the first thing to know when reading a violation.
std::string granted_both(const hold_record& earlier, const hold_record& h) {
    if (earlier.granted.empty() || h.granted.empty()) return "";
    const auto first = granting_nodes(earlier);
    std::vector<std::uint64_t> both;
    for (const auto n : granting_nodes(h))
        if (first.contains(n)) both.push_back(n);
    std::string out = "; granted by " + earlier.granted + " and by " + h.granted + ": ";
    if (both.empty()) return out + "no node granted both";
    out += both.size() == 1 ? "node " : "nodes ";
    for (std::size_t i = 0; i < both.size(); ++i) {
        if (i != 0) out += ',';
        out += std::to_string(both[i]);
    }
    return out + " granted both";
}

std::string overlap(const hold_record& earlier, const hold_record& h) {
    return h.resource + ": a " + h.kind + " hold began " +
           std::to_string((hold_end(earlier) - h.acquired) / 1000) + " us before a " + earlier.kind +
           " hold ended" + granted_both(earlier, h);
}

// `holds` by start. A hold may overlap the holds still running when it starts if both are reads,
// or if both are a semaphore's and fewer than its holders_allowed are running; else never.
void check_mutual_exclusion(const std::vector<const hold_record*>& holds, std::vector<violation>& out) {
    std::vector<const hold_record*> running;
    for (const hold_record* h : holds) {
        std::erase_if(running, [&](const hold_record* r) { return hold_end(*r) <= h->acquired; });
        if (h->kind == "semaphore") {
            if (running.size() >= h->holders_allowed) {
                violation v{"permits_exceeded",
                            h->resource + ": a hold began while " + std::to_string(running.size()) +
                                " were running, of at most " + std::to_string(h->holders_allowed),
                            {}};
                for (const hold_record* r : running)
                    v.evidence.push_back(to_json_line(*r));
                v.evidence.push_back(to_json_line(*h));
                out.push_back(std::move(v));
            }
        } else {
            const auto conflict = std::find_if(running.begin(), running.end(), [&](const hold_record* r) {
                return h->kind != "read" || r->kind != "read";
            });
            if (conflict != running.end())
                out.push_back({"mutual_exclusion",
                               overlap(**conflict, *h),
                               {to_json_line(**conflict), to_json_line(*h)}});
        }
        running.push_back(h);
    }
}

void check_fence_order(const std::vector<const hold_record*>& by_start, const lineages& lineage,
                       std::vector<violation>& out) {
    std::vector<const hold_record*> fenced;
    for (const hold_record* h : by_start)
        if (h->fence != 0) fenced.push_back(h);
    std::vector<const hold_record*> by_end = fenced;
    std::sort(by_end.begin(), by_end.end(),
              [](const hold_record* a, const hold_record* b) { return hold_end(*a) < hold_end(*b); });
    const hold_record* largest_before = nullptr;  // the largest fence among holds already ended
    std::size_t ended = 0;
    for (const hold_record* h : fenced) {
        while (ended < by_end.size() && hold_end(*by_end[ended]) <= h->acquired) {
            if (largest_before == nullptr || by_end[ended]->fence > largest_before->fence)
                largest_before = by_end[ended];
            ++ended;
        }
        if (largest_before != nullptr &&
            (h->fence < largest_before->fence ||
             (h->fence == largest_before->fence && lineage.of(*h) != lineage.of(*largest_before)))) {
            out.push_back({"fence_order",
                           h->resource + ": fence " + std::to_string(h->fence) +
                               " granted after a hold with fence " + std::to_string(largest_before->fence) +
                               " had ended",
                           {to_json_line(*largest_before), to_json_line(*h)}});
        }
    }
}

void check_store(const std::map<std::string, std::vector<accepted_write>>& store, const lineages& lineage,
                 std::vector<violation>& out) {
    for (const auto& [resource, writes] : store) {
        for (std::size_t i = 1; i < writes.size(); ++i) {
            const auto& a = writes[i - 1];
            const auto& b = writes[i];
            if (b.fence < a.fence ||
                (b.fence == a.fence && b.token != a.token && lineage.of(b) != lineage.of(a))) {
                out.push_back({"store_fences",
                               resource + ": the store accepted fence " + std::to_string(b.fence) +
                                   " (token " + b.token + ") after fence " + std::to_string(a.fence) +
                                   " (token " + a.token + ")",
                               {}});
            }
        }
    }
}

}  // namespace

std::size_t judged_holds(const history& h) {
    return static_cast<std::size_t>(std::count_if(
        h.holds.begin(), h.holds.end(), [](const hold_record& r) { return hold_end(r) > r.acquired; }));
}

std::vector<violation> check_history(const history& h,
                                     const std::map<std::string, std::vector<accepted_write>>& store,
                                     int workers, const std::set<int>& killed) {
    std::vector<violation> out;
    const lineages lineage(h);
    for (const auto& [resource, holds] : holds_by_resource(h)) {
        check_mutual_exclusion(holds, out);
        check_fence_order(holds, lineage, out);
    }
    for (const auto& hold : h.holds) {
        // Read at the body's start and end: a renewal may come before either.
        const auto ttl = static_cast<nanos>(hold.ttl_ms) * 1'000'000;
        for (auto [read_at, valid_until] :
             {std::pair{hold.acquired, hold.granted_until}, std::pair{hold.ended, hold.valid_until}}) {
            if (valid_until > read_at + ttl) {
                out.push_back({"validity_too_long",
                               hold.resource + ": valid for " +
                                   std::to_string((valid_until - read_at) / 1'000'000) +
                                   " ms from the moment it was read, with a ttl of " +
                                   std::to_string(hold.ttl_ms) + " ms",
                               {to_json_line(hold)}});
                break;
            }
        }
        const auto promised = static_cast<nanos>(hold.promised_ms) * 1'000'000;
        if (hold.promised_ms != 0 && hold.granted_until < hold.invoked + promised) {
            out.push_back({"validity_too_short",
                           hold.resource + ": granted a validity of " +
                               std::to_string((hold.granted_until - hold.invoked) / 1'000'000) +
                               " ms from the call, of the " + std::to_string(hold.promised_ms) +
                               " ms its ttl promises",
                           {to_json_line(hold)}});
        }
        if (const auto granting = granting_nodes(hold).size(); granting < hold.quorum) {
            out.push_back({"grant_without_quorum",
                           hold.resource + ": a " + hold.kind + " hold granted by " +
                               std::to_string(granting) + " node(s) (\"" + hold.granted +
                               "\"), of a quorum of " + std::to_string(hold.quorum),
                           {to_json_line(hold)}});
        }
        if (hold.kind.starts_with("fenced") && hold.fence == 0) {
            out.push_back({"fence_missing",
                           hold.resource + ": a hold of kind " + hold.kind + " without a fence",
                           {to_json_line(hold)}});
        }
    }
    for (const auto& r : h.reentries) {
        if (r.error.empty() && r.completed <= r.outer_valid_until && r.inner_fence != r.outer_fence) {
            out.push_back({"reentry_fence",
                           r.resource + ": a re-entry got fence " + std::to_string(r.inner_fence) +
                               " inside a hold with fence " + std::to_string(r.outer_fence),
                           {to_json_line(r)}});
        }
    }
    for (const auto& w : h.writes) {
        if (!w.accepted && w.completed <= w.valid_until) {
            out.push_back({"valid_write_refused",
                           w.resource + ": the store refused fence " + std::to_string(w.fence) +
                               " while its lease was valid: a newer fence had been issued",
                           {to_json_line(w)}});
        }
    }
    check_store(store, lineage, out);
    std::set<int> reported;
    for (const auto& s : h.summaries) {
        reported.insert(s.worker);
        if (s.watchdogs_running != 0) {
            out.push_back({"watchdog_stopped",
                           "worker " + std::to_string(s.worker) + ": " + std::to_string(s.watchdogs_running) +
                               " watchdogs still running after every scope ended",
                           {to_json_line(s)}});
        }
        if (s.scopes_started != s.scopes_ended) {
            out.push_back({"scopes_ended",
                           "worker " + std::to_string(s.worker) + ": " + std::to_string(s.scopes_started) +
                               " scopes started, " + std::to_string(s.scopes_ended) + " ended",
                           {to_json_line(s)}});
        }
    }
    for (int w = 0; w < workers; ++w) {
        if (!reported.contains(w) && !killed.contains(w)) {
            out.push_back(
                {"scopes_ended", "worker " + std::to_string(w) + " left no summary (it did not finish)", {}});
        }
    }
    return out;
}

}  // namespace redlock::chaos
