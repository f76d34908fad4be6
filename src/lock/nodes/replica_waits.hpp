// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_LOCK_NODES_REPLICA_WAITS_HPP
#define REDLOCK_LOCK_NODES_REPLICA_WAITS_HPP

#include <redlock/resp/value.hpp>

#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::detail {

class client_state;

/// What a WAIT's reply says of a write that asked for `replicas` replicas: no error if enough
/// acknowledged it; else unexpected_reply or not_replicated, with the words for diagnostics
/// ("WAIT: 0 of 1 replicas acknowledged <what> within 100 ms").
struct replication_verdict {
    boost::system::error_code ec;
    std::string detail;
};
[[nodiscard]] replication_verdict judge_replication(const resp::value& acks, int replicas,
                                                    std::chrono::milliseconds replica_timeout,
                                                    std::string_view what);
/// judge_replication() of the WAIT a call carried right behind its write, reply `wait_reply` of
/// `replies` (node_call::wait_for_replicas); nothing when it asked none (0), or when the replies
/// came back without it (a cluster's call split into steps), whose write a WAIT of its own
/// (replica_waits) must confirm.
[[nodiscard]] std::optional<replication_verdict> judge_pinned_wait(std::size_t wait_reply,
                                                                   std::span<const resp::value> replies,
                                                                   int replicas,
                                                                   std::chrono::milliseconds replica_timeout,
                                                                   std::string_view what);

/// WAIT after a node confirmed a write of ours (a grant, an extend): the write counts once
/// `replicas` replicas acknowledged it, so that a failover to a replica does not lose it
/// (lock_options::replicas). WAIT covers every write its connection made before it, so the
/// writes whose replies arrive in one turn of the strand share one WAIT per node: a batched
/// renewal of many leases waits once per node, not once per lease. Strand only.
class replica_waits {
public:
    /// The WAIT's reply (the number of replicas that acknowledged), or why there is none.
    using done_fn = std::function<void(boost::system::error_code, const resp::value& acks)>;
    using verdict_fn = std::function<void(replication_verdict)>;

    replica_waits(client_state& client, std::size_t nodes);

    /// Sends `WAIT replicas replica_timeout` on node `node` (a cluster: to the master of `key`'s
    /// slot, which took the write) once the current turn of the strand is over (with every other
    /// wait for the same server and numbers), and calls `done` with its reply; the request's
    /// timeout is `node_timeout` + `replica_timeout`.
    void wait(std::size_t node, std::string_view key, int replicas, std::chrono::milliseconds replica_timeout,
              std::chrono::milliseconds node_timeout, done_fn done);
    /// wait(), then judge_replication() on its reply (`what` names the write): `done` gets no
    /// error once enough replicas have the write. A failed WAIT counts against the node.
    void confirm(std::size_t node, std::string_view key, int replicas,
                 std::chrono::milliseconds replica_timeout, std::chrono::milliseconds node_timeout,
                 std::string_view what, verdict_fn done);

    /// Forgets the WAITs not sent yet without a reply (their context shut down). Never throws.
    void drop_all() noexcept;

private:
    struct group {
        std::uint16_t slot;  // a cluster: the slot of `key`; 0 for a single server
        std::string key;     // routes the WAIT
        int replicas;
        std::chrono::milliseconds replica_timeout;
        std::chrono::milliseconds node_timeout;
        std::vector<done_fn> waiters;
    };

    void send(std::size_t node);

    client_state& client_;
    std::vector<std::vector<group>> pending_;  // per node: the waits not sent yet
};

}  // namespace redlock::detail

#endif
