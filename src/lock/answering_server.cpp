// SPDX-License-Identifier: BSL-1.0
#include "lock/answering_server.hpp"

namespace redlock::detail {

std::string why_answer_does_not_count(const node_health_board& board, std::optional<std::size_t> entry,
                                      std::string_view server, std::chrono::steady_clock::time_point now) {
    const auto named = "the master that answered, " + std::string(server) + ": ";
    if (!entry) return named + "its identity and failover mark are not known to this client yet";
    if (board.votes(*entry, now)) return {};
    auto problem = board.describe(*entry, now).problem;
    return named + (problem.empty() ? "it does not vote yet" : std::move(problem));
}

}  // namespace redlock::detail
