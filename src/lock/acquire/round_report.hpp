// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_LOCK_ACQUIRE_ROUND_REPORT_HPP
#define REDLOCK_LOCK_ACQUIRE_ROUND_REPORT_HPP

#include "lock/acquire/quorum.hpp"
#include <redlock/diagnostics.hpp>

#include <boost/system/error_code.hpp>

#include <chrono>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::detail {

/// What each node answered in the current round of one operation, for the text of diagnostics.
class round_report {
public:
    /// `node_names`: one per node, outliving the report (the client's).
    round_report(std::span<const std::string> node_names, std::string_view operation,
                 std::string_view resource);

    void reset();
    using clock = std::chrono::steady_clock;

    void record(std::size_t node, vote v, boost::system::error_code ec, std::string detail);
    /// Node `node`, recorded as failed, is in a quarantine that ends at `until`.
    void quarantined_until(std::size_t node, clock::time_point until);
    /// A grant of node `node`'s no longer counts (the round that had it failed, and the lock
    /// came by a hand-off): it is reported as denied.
    void given_back(std::size_t node);

    [[nodiscard]] std::vector<node_outcome> outcomes() const;
    /// The error of a round too many nodes failed: server_error when every node that failed
    /// answered with an error reply (a refused command, e.g. NOPERM from an ACL: the message
    /// names it), the caller's mistake when, beside such refusals, a node named one
    /// (is_callers_mistake); quorum_unreachable when any failed by timeout or connection.
    /// A refusal that stays (is_permanent_failure) comes before the others.
    [[nodiscard]] boost::system::error_code unreachable_cause() const;
    /// Whether the nodes that refused for good are too many for a quorum of `quorum`: waiting
    /// cannot help, the acquire fails at once.
    [[nodiscard]] bool no_quorum_ever(std::size_t quorum) const;
    /// Whether the nodes that refused for good and those quarantined past `deadline` are too
    /// many for a quorum of `quorum` before it: waiting until then cannot help.
    [[nodiscard]] bool no_quorum_before(std::size_t quorum, clock::time_point deadline) const;
    /// `<operation> "<resource>" on N nodes: <outcome>: granted g, denied d, failed f, pending p
    /// (quorum q); denied: <nodes>; failed: <node>, <node> (<cause>); <node> (<cause>)`
    [[nodiscard]] std::string summary(const vote_tally& tally, std::string_view outcome) const;
    /// summary() of a granted acquire: "acquired" (or "handed over by the release", with
    /// `handed_over`), with the validity `left`.
    [[nodiscard]] std::string grant_summary(const vote_tally& tally, bool handed_over,
                                            std::chrono::steady_clock::duration left) const;

private:
    std::span<const std::string> node_names_;
    std::string operation_;
    std::string resource_;
    struct node_answer {
        node_outcome::verdict verdict = node_outcome::verdict::pending;
        boost::system::error_code error;
        std::string detail;
        clock::time_point votes_from{};  // a quarantined node's end of quarantine
    };
    std::vector<node_answer> answers_;  // one allocation per operation, not one per field
};

/// A failed node's cause as a person reads it: a node that is not connected says why (its
/// connection's error), a quarantined one which quarantine and for how long, any other the
/// code's message and the detail.
[[nodiscard]] std::string failure_cause(boost::system::error_code ec, std::string_view detail);

struct node_cause {
    std::string node;
    std::string cause;
};
/// "a, b (cause); c (other cause)": each cause said once, after the nodes that failed with it, in
/// the order the causes first appear.
[[nodiscard]] std::string failures_by_cause(std::span<const node_cause> failed);

/// A node's refusal that waiting does not change: the caller asked for what the resource's
/// holders forbid (permits_mismatch, upgrade_refused). The acquire fails at once.
[[nodiscard]] bool is_callers_mistake(boost::system::error_code ec) noexcept;

/// A node's failure that another round meets again: its server refused the credentials, an ACL
/// permission, a command it lacks, or is too old (redis::connection_error::permanent,
/// redis::detail::is_permanent_refusal). Not a timeout, a lost connection or a LOADING.
[[nodiscard]] bool is_permanent_failure(boost::system::error_code ec, std::string_view detail) noexcept;

}  // namespace redlock::detail

#endif
