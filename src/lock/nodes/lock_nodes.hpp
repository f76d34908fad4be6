// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_LOCK_NODES_LOCK_NODES_HPP
#define REDLOCK_LOCK_NODES_LOCK_NODES_HPP

#include "lock/kinds/lock_kind.hpp"
#include "lock/nodes/replica_waits.hpp"
#include <redlock/resp/value.hpp>

#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace redlock::detail {

/// Which of its calls an answer is for, in the caller's own terms (an event type, a round).
struct call_tag {
    unsigned what = 0;
    unsigned round = 0;
};

/// Who hears the nodes' answers: an operation that sent them calls (acquire_op, a lease's
/// round). Told on the client's strand, once per call sent, with the tag it was sent with.
class node_answers {
public:
    /// Node `node`'s replies to a call (as many as node_call::replies()), or its failure `ec`
    /// (then `replies` may hold the server's error reply, or nothing).
    virtual void on_node_answer(call_tag tag, std::size_t node, boost::system::error_code ec,
                                std::span<const resp::value> replies) = 0;
    /// The verdict of a WAIT sent by lock_nodes::confirm_replicas.
    virtual void on_replicas(call_tag tag, std::size_t node, replication_verdict verdict) {
        (void)tag;
        (void)node;
        (void)verdict;
    }

protected:
    ~node_answers() = default;
};

/// The N voters as the operations see them: a call that a lock's kind built goes to one node,
/// and its answer comes back on the client's strand. The client's are its connections
/// (client_state); a scripted test gives its own, which answer as the test says.
class lock_nodes {
public:
    using milliseconds = std::chrono::milliseconds;

    virtual ~lock_nodes() = default;

    [[nodiscard]] virtual std::size_t count() const noexcept = 0;
    /// Sends `call` to node `node` within `timeout`; its answer goes to `to` (null: nobody
    /// waits for it, as for a release in the background). A server's error reply to a script
    /// is error::server_error, with the reply; a pipeline answered with a wrong number of
    /// replies, error::unexpected_reply. `call` need only live until this returns.
    virtual void call(std::size_t node, const node_call& call, milliseconds timeout,
                      std::shared_ptr<node_answers> to, call_tag tag) = 0;
    /// Moves the expiry of `token`'s hold of `kind` on node `node` to `ttl` from now: the
    /// kind's extend, which the client batches with other leases' where the kind allows
    /// (lock_kind::extends_in_batches). The answer is the script's reply alone.
    virtual void extend(std::size_t node, const lock_kind& kind, const std::string& token, milliseconds ttl,
                        milliseconds timeout, std::shared_ptr<node_answers> to, call_tag tag) = 0;
    /// A WAIT on node `node` for `replicas` replicas of what was written on `key` there, for
    /// `what` (in messages); its verdict goes to `to->on_replicas()`.
    virtual void confirm_replicas(std::size_t node, std::string_view key, int replicas,
                                  milliseconds replica_timeout, milliseconds timeout, std::string_view what,
                                  std::shared_ptr<node_answers> to, call_tag tag) = 0;

    /// call() to every node.
    void call_all(const node_call& c, milliseconds timeout, const std::shared_ptr<node_answers>& to,
                  call_tag tag) {
        for (std::size_t i = 0; i < count(); ++i)
            call(i, c, timeout, to, tag);
    }
};

}  // namespace redlock::detail

#endif
