// SPDX-License-Identifier: BSL-1.0
#include "lock/acquire/round_report.hpp"

#include "redis/handshake.hpp"
#include <redlock/error.hpp>

#include <algorithm>

namespace redlock::detail {

round_report::round_report(std::span<const std::string> node_names, std::string_view operation,
                           std::string_view resource)
    : node_names_(node_names), operation_(operation), resource_(resource) {
    reset();
}

void round_report::reset() {
    const auto n = node_names_.size();
    answers_.assign(n, {});
}

void round_report::record(std::size_t node, vote v, boost::system::error_code ec, std::string detail) {
    if (node >= answers_.size()) return;
    auto& a = answers_[node];
    switch (v) {
        case vote::granted:
            a.verdict = node_outcome::verdict::granted;
            break;
        case vote::denied:
            a.verdict = node_outcome::verdict::denied;
            break;
        case vote::failed:
            a.verdict = node_outcome::verdict::failed;
            break;
    }
    a.error = ec;
    a.detail = std::move(detail);
    a.votes_from = {};
}

void round_report::quarantined_until(std::size_t node, clock::time_point until) {
    if (node < answers_.size() && answers_[node].verdict == node_outcome::verdict::failed)
        answers_[node].votes_from = until;
}

void round_report::given_back(std::size_t node) {
    if (node < answers_.size() && answers_[node].verdict == node_outcome::verdict::granted)
        answers_[node].verdict = node_outcome::verdict::denied;
}

std::vector<node_outcome> round_report::outcomes() const {
    std::vector<node_outcome> out;
    out.reserve(answers_.size());
    for (std::size_t i = 0; i < answers_.size(); ++i) {
        const auto& a = answers_[i];
        out.push_back(node_outcome{node_names_[i], a.verdict, a.error, a.detail});
    }
    return out;
}

std::string round_report::summary(const vote_tally& tally, std::string_view outcome) const {
    std::size_t pending = 0;
    std::string denied;
    std::vector<node_cause> failed;
    for (std::size_t i = 0; i < answers_.size(); ++i) {
        switch (answers_[i].verdict) {
            case node_outcome::verdict::pending:
                ++pending;
                break;
            case node_outcome::verdict::granted:
                break;
            case node_outcome::verdict::denied:
                if (!denied.empty()) denied += ", ";
                denied += node_names_[i];
                break;
            case node_outcome::verdict::failed:
                failed.push_back({node_names_[i], failure_cause(answers_[i].error, answers_[i].detail)});
                break;
        }
    }
    std::string s = operation_ + " \"" + resource_ + "\" on " + std::to_string(answers_.size()) + " node" +
                    (answers_.size() == 1 ? "" : "s") + ": " + std::string(outcome) + ": granted " +
                    std::to_string(tally.granted()) + ", denied " + std::to_string(tally.denied()) +
                    ", failed " + std::to_string(tally.failed()) + ", pending " + std::to_string(pending) +
                    " (quorum " + std::to_string(tally.quorum()) + ")";
    if (!denied.empty()) s += "; denied: " + denied;
    if (!failed.empty()) s += "; failed: " + failures_by_cause(failed);
    return s;
}

boost::system::error_code round_report::unreachable_cause() const {
    bool refused = false;
    boost::system::error_code mistake;
    boost::system::error_code permanent;
    for (const auto& a : answers_) {
        if (a.verdict != node_outcome::verdict::failed) continue;
        if (is_callers_mistake(a.error)) {
            mistake = a.error;
        } else if (is_permanent_failure(a.error, a.detail)) {
            if (!permanent) permanent = a.error;
        } else if (a.error == error::server_error) {
            refused = true;
        } else {
            return error::quorum_unreachable;
        }
    }
    // The caller's own mistake, where a node said so, before the servers' refusals, and the
    // refusals that stay before those that may pass.
    if (mistake) return mistake;
    if (permanent) return permanent;
    return refused ? error::server_error : error::quorum_unreachable;
}

bool round_report::no_quorum_ever(std::size_t quorum) const {
    return no_quorum_before(quorum, clock::time_point::max());
}

bool round_report::no_quorum_before(std::size_t quorum, clock::time_point deadline) const {
    // Nodes that refused for good, and quarantined nodes that vote only after the deadline: the
    // others might all grant by then (denials pass, failures may heal).
    const auto out = std::count_if(answers_.begin(), answers_.end(), [&](const node_answer& a) {
        return a.verdict == node_outcome::verdict::failed &&
               (is_permanent_failure(a.error, a.detail) || a.votes_from > deadline);
    });
    return static_cast<std::size_t>(out) > answers_.size() - quorum;
}

bool is_permanent_failure(boost::system::error_code ec, std::string_view detail) noexcept {
    // auth_failed, handshake_failed and tls_failed reach a vote only from a connection refused
    // for good (client_state::admit); a command refused is judged on the server's words.
    if (ec == error::auth_failed || ec == error::handshake_failed || ec == error::tls_failed) return true;
    return ec == error::server_error && redis::detail::is_permanent_refusal(detail);
}

bool is_callers_mistake(boost::system::error_code ec) noexcept {
    return ec == error::permits_mismatch || ec == error::upgrade_refused;
}

std::string round_report::grant_summary(const vote_tally& tally, bool handed_over,
                                        std::chrono::steady_clock::duration left) const {
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(left).count();
    return summary(tally, std::string(handed_over ? "handed over by the release" : "acquired") +
                              ", validity left " + std::to_string(ms) + " ms");
}

std::string failure_cause(boost::system::error_code ec, std::string_view detail) {
    constexpr std::string_view not_connected = "not connected: ", connecting = "connecting to ";
    if ((ec == error::request_timeout || is_permanent_failure(ec, detail)) &&
        detail.starts_with(not_connected)) {
        // The request never left: the connection's own error says why, without the address,
        // which the node's name already gives.
        auto why = detail.substr(not_connected.size());
        if (why.starts_with(connecting)) {
            const auto colon = why.find(": ");
            if (colon != std::string_view::npos) why.remove_prefix(colon + 2);
        }
        return std::string(not_connected) + std::string(why);
    }
    // A quarantined node's detail says which quarantine and for how long: the code's message
    // would say it a second time.
    if (ec == error::node_quarantined && !detail.empty()) return std::string(detail);
    auto cause = ec.message();
    if (!detail.empty()) cause.append(": ").append(detail);
    return cause;
}

std::string failures_by_cause(std::span<const node_cause> failed) {
    std::string s;
    std::vector<bool> said(failed.size(), false);
    for (std::size_t i = 0; i < failed.size(); ++i) {
        if (said[i]) continue;
        if (!s.empty()) s += "; ";
        s += failed[i].node;
        for (std::size_t j = i + 1; j < failed.size(); ++j) {
            if (said[j] || failed[j].cause != failed[i].cause) continue;
            said[j] = true;
            s += ", " + failed[j].node;
        }
        s += " (" + failed[i].cause + ")";
    }
    return s;
}

}  // namespace redlock::detail
