// SPDX-License-Identifier: BSL-1.0
#include "lock/acquire/client_acquire_context.hpp"

#include "lock/client/suspension.hpp"

namespace redlock::detail {

std::string client_acquire_context::new_token(std::string_view label) {
    return client_.make_holder_token(label);
}

bool client_acquire_context::votes(std::size_t node, std::string_view key) const {
    return client_.votes(node, key);
}

void client_acquire_context::admit(std::size_t node, std::string_view key, vote& v,
                                   boost::system::error_code& ec, std::string& detail) {
    client_.admit(node, key, v, ec, detail);
}

std::chrono::milliseconds client_acquire_context::quarantine_left(std::size_t node,
                                                                  std::string_view key) const {
    return client_.quarantine_left(node, key);
}

void client_acquire_context::judge_answer(std::size_t node, acquire_answer& answer,
                                          std::size_t replication_id_reply,
                                          std::span<const resp::value> replies) const {
    client_.judge_answer(node, answer, replication_id_reply, replies);
}

std::string client_acquire_context::why_answer_does_not_count(std::size_t node,
                                                              std::size_t replication_id_reply,
                                                              std::span<const resp::value> replies,
                                                              boost::system::error_code& ec) const {
    return client_.why_answer_does_not_count(node, replication_id_reply, replies, ec);
}

bool client_acquire_context::runs_steps(std::size_t node, const node_call& call) const {
    return client_.runs_steps(node, call);
}

std::uint64_t client_acquire_context::live_fence(const std::string& lock_key, const std::string& owner,
                                                 clock::time_point now) {
    return client_.holds().live_fence(lock_key, owner, now);
}

std::chrono::nanoseconds client_acquire_context::suspended_so_far() const {
    return detail::suspended_so_far();
}

acquire_setup acquire_setup_of(const client_state& client, std::string resource,
                               std::vector<std::string> resources, lock_options options,
                               std::shared_ptr<const lock_kind> kind, bool wants_grant_message) {
    const auto& cfg = client.config();
    const auto node_timeout = client.node_timeout_for(options.ttl, options.node_timeout);
    return acquire_setup{std::move(resource),
                         std::move(resources),
                         std::move(options),
                         std::move(kind),
                         client.node_count(),
                         cfg.retry,
                         cfg.drift_factor,
                         node_timeout,
                         client.background_timeout(),
                         client.asks_replication_id(),
                         wants_grant_message};
}

}  // namespace redlock::detail
