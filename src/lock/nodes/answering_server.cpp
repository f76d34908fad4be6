// SPDX-License-Identifier: BSL-1.0
#include "lock/nodes/answering_server.hpp"

namespace redlock::detail {

std::string why_answer_does_not_count(const node_health_board& board, std::optional<std::size_t> entry,
                                      std::string_view server, std::chrono::steady_clock::time_point now) {
    const auto named = "the master that answered, " + std::string(server) + ": ";
    if (!entry) return named + "its identity and failover mark are not known to this client yet";
    if (board.votes(*entry, now)) return {};
    auto problem = board.describe(*entry, now).problem;
    return named + (problem.empty() ? "it does not vote yet" : std::move(problem));
}

std::string why_replication_id_does_not_count(node_health_board& board, std::size_t entry,
                                              const resp::value* info, std::string_view server,
                                              bool& malformed) {
    const auto named = server.empty() ? std::string("the server that answered: ")
                                      : "the master that answered, " + std::string(server) + ": ";
    const auto id = info ? replication_id_of(*info) : std::string_view();
    malformed = id.empty();
    if (malformed) {
        return named + "its INFO replication names no master_replid: " +
               (info ? resp::to_string(*info) : std::string("no reply"));
    }
    if (board.granted_under(entry, id)) return {};
    return named + "its replication ID " + std::string(id) +
           " is not the one this client read from it: it was made a replica and a master again since; " +
           board.describe(entry, std::chrono::steady_clock::now()).problem;
}

}  // namespace redlock::detail
