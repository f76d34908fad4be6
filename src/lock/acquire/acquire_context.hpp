// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_LOCK_ACQUIRE_ACQUIRE_CONTEXT_HPP
#define REDLOCK_LOCK_ACQUIRE_ACQUIRE_CONTEXT_HPP

#include "lock/acquire/quorum.hpp"
#include "lock/kinds/lock_kind.hpp"
#include "lock/metrics/metrics_recorder.hpp"
#include <redlock/resp/value.hpp>

#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace redlock::detail {

/// What an acquisition asks of its client beside sending: what a node's answer is worth (its
/// quarantines, the server that made it), new tokens, the client's own holds and its counters.
/// No I/O: answered from memory, at once. The client's is client_acquire_context; a scripted
/// unit test gives its own.
class acquire_context {
public:
    using clock = std::chrono::steady_clock;

    virtual ~acquire_context() = default;

    /// One per node, for messages; outlives the acquisition.
    [[nodiscard]] virtual std::span<const std::string> node_names() const = 0;
    /// A new token for a hold labelled `label`. Throws std::exception when no random bytes come.
    [[nodiscard]] virtual std::string new_token(std::string_view label) = 0;
    /// Whether node `node`'s grants on `key` count now (client_state::votes).
    [[nodiscard]] virtual bool votes(std::size_t node, std::string_view key) const = 0;
    /// Node `node`'s vote on `key` as it counts (client_state::admit).
    virtual void admit(std::size_t node, std::string_view key, vote& v, boost::system::error_code& ec,
                       std::string& detail) = 0;
    /// How long node `node` does not vote on `key` for a quarantine; zero if it does.
    [[nodiscard]] virtual std::chrono::milliseconds quarantine_left(std::size_t node,
                                                                    std::string_view key) const = 0;
    /// A round's answer from node `node`: a grant that does not count becomes a failure
    /// (client_state::judge_answer).
    virtual void judge_answer(std::size_t node, acquire_answer& answer, std::size_t replication_id_reply,
                              std::span<const resp::value> replies) const = 0;
    /// Empty, or why node `node`'s grant in `replies` does not count, with `ec` set to why.
    [[nodiscard]] virtual std::string why_answer_does_not_count(std::size_t node,
                                                                std::size_t replication_id_reply,
                                                                std::span<const resp::value> replies,
                                                                boost::system::error_code& ec) const = 0;
    /// Whether node `node` runs `call` as its steps, one script call per slot (no reply of its
    /// own beside the script's).
    [[nodiscard]] virtual bool runs_steps(std::size_t node, const node_call& call) const = 0;
    /// The fence of a live hold of `owner` on `lock_key` of this client's that a re-entry
    /// enters (owned_holds); 0 if none.
    [[nodiscard]] virtual std::uint64_t live_fence(const std::string& lock_key, const std::string& owner,
                                                   clock::time_point now) = 0;
    /// suspended_so_far(): how long the machine slept so far (lease validity across a suspend).
    [[nodiscard]] virtual std::chrono::nanoseconds suspended_so_far() const = 0;
    virtual metrics_recorder& metrics() = 0;
};

}  // namespace redlock::detail

#endif
