// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_LOCK_ACQUIRE_CLIENT_ACQUIRE_CONTEXT_HPP
#define REDLOCK_LOCK_ACQUIRE_CLIENT_ACQUIRE_CONTEXT_HPP

#include "lock/acquire/acquire_context.hpp"
#include "lock/acquire/acquire_fsm.hpp"
#include "lock/client/client_state.hpp"

namespace redlock::detail {

/// An acquisition's context as its client answers it: client_state's judgments of the nodes,
/// its tokens, its holds and its metrics. Strand only.
class client_acquire_context final : public acquire_context {
public:
    explicit client_acquire_context(client_state& client) : client_(client) {}

    [[nodiscard]] std::span<const std::string> node_names() const override { return client_.node_names(); }
    [[nodiscard]] std::string new_token(std::string_view label) override;
    [[nodiscard]] bool votes(std::size_t node, std::string_view key) const override;
    void admit(std::size_t node, std::string_view key, vote& v, boost::system::error_code& ec,
               std::string& detail) override;
    [[nodiscard]] std::chrono::milliseconds quarantine_left(std::size_t node,
                                                            std::string_view key) const override;
    void judge_answer(std::size_t node, acquire_answer& answer, std::size_t replication_id_reply,
                      std::span<const resp::value> replies) const override;
    [[nodiscard]] std::string why_answer_does_not_count(std::size_t node, std::size_t replication_id_reply,
                                                        std::span<const resp::value> replies,
                                                        boost::system::error_code& ec) const override;
    [[nodiscard]] bool runs_steps(std::size_t node, const node_call& call) const override;
    [[nodiscard]] std::uint64_t live_fence(const std::string& lock_key, const std::string& owner,
                                           clock::time_point now) override;
    [[nodiscard]] std::chrono::nanoseconds suspended_so_far() const override;
    metrics_recorder& metrics() override { return client_.metrics(); }

private:
    client_state& client_;
};

/// What an acquisition of `resource` (`resources`: several) with `options` and `kind` knows from
/// `client` for its whole life; `wants_grant_message`: the caller asked for diagnostics.
[[nodiscard]] acquire_setup acquire_setup_of(const client_state& client, std::string resource,
                                             std::vector<std::string> resources, lock_options options,
                                             std::shared_ptr<const lock_kind> kind, bool wants_grant_message);

}  // namespace redlock::detail

#endif
