// SPDX-License-Identifier: BSL-1.0
#include "lock/nodes/replica_waits.hpp"

#include "lock/client/client_state.hpp"
#include <redlock/error.hpp>
#include <redlock/resp/request.hpp>

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/post.hpp>

#include <algorithm>
#include <utility>

namespace redlock::detail {

namespace asio = boost::asio;
using boost::system::error_code;

replication_verdict judge_replication(const resp::value& acks, int replicas,
                                      std::chrono::milliseconds replica_timeout, std::string_view what) {
    if (acks.kind != resp::type::integer) return {error::unexpected_reply, "WAIT: " + resp::to_string(acks)};
    if (acks.integer >= replicas) return {};
    return {error::not_replicated, "WAIT: " + std::to_string(acks.integer) + " of " +
                                       std::to_string(replicas) + " replicas acknowledged " +
                                       std::string(what) + (what.empty() ? "" : " ") + "within " +
                                       std::to_string(replica_timeout.count()) + " ms"};
}

std::optional<replication_verdict> judge_pinned_wait(std::size_t wait_reply,
                                                     std::span<const resp::value> replies, int replicas,
                                                     std::chrono::milliseconds replica_timeout,
                                                     std::string_view what) {
    if (wait_reply == 0 || replies.size() <= wait_reply) return std::nullopt;
    return judge_replication(replies[wait_reply], replicas, replica_timeout, what);
}

replica_waits::replica_waits(client_state& client, std::size_t nodes) : client_(client), pending_(nodes) {}

void replica_waits::wait(std::size_t node, std::string_view key, int replicas,
                         std::chrono::milliseconds replica_timeout, std::chrono::milliseconds node_timeout,
                         done_fn done) {
    auto& groups = pending_[node];
    if (groups.empty()) {
        asio::post(client_.strand(), [self = client_.shared_from_this(), this, node] { send(node); });
    }
    // A cluster's masters each WAIT for their own writes: one WAIT per slot there. (Slots of
    // one master could share one; renewals are batched per slot already.)
    const std::uint16_t slot = client_.link(node).routes_by_slot() ? redis::detail::key_slot(key) : 0;
    auto it = std::find_if(groups.begin(), groups.end(), [&](const group& g) {
        return g.slot == slot && g.replicas == replicas && g.replica_timeout == replica_timeout;
    });
    if (it == groups.end()) {
        groups.push_back({slot, std::string(key), replicas, replica_timeout, node_timeout, {}});
        it = std::prev(groups.end());
    }
    it->node_timeout = std::max(it->node_timeout, node_timeout);
    it->waiters.push_back(std::move(done));
}

void replica_waits::confirm(std::size_t node, std::string_view key, int replicas,
                            std::chrono::milliseconds replica_timeout, std::chrono::milliseconds node_timeout,
                            std::string_view what, verdict_fn done) {
    wait(node, key, replicas, replica_timeout, node_timeout,
         [client = client_.shared_from_this(), node, replicas, replica_timeout, what = std::string(what),
          done = std::move(done)](error_code ec, const resp::value& acks) {
             auto verdict = ec ? replication_verdict{ec, "WAIT: " + ec.message()}
                               : judge_replication(acks, replicas, replica_timeout, what);
             if (verdict.ec && verdict.ec != error::not_replicated)
                 client->metrics().node_failure(node, verdict.ec);
             done(std::move(verdict));
         });
}

void replica_waits::drop_all() noexcept {
    for (auto& groups : pending_) {
        // Taken out before they die: a waiter's destructor may reach back into the client.
        auto dropped = std::move(groups);
        groups.clear();
    }
}

void replica_waits::send(std::size_t node) {
    for (auto& g : std::exchange(pending_[node], {})) {
        resp::request req;
        req.push("WAIT", g.replicas, g.replica_timeout.count());
        client_.link(node).exec(
            g.key, req, g.node_timeout + g.replica_timeout,
            asio::bind_executor(client_.strand(), [waiters = std::move(g.waiters)](
                                                      error_code ec, std::vector<resp::value> replies) {
                if (!ec && replies.size() != 1) ec = error::unexpected_reply;
                const resp::value none;
                for (const auto& w : waiters)
                    w(ec, ec ? none : replies.front());
            }));
    }
}

}  // namespace redlock::detail
