// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_LOCK_CLIENT_CLIENT_STATE_HPP
#define REDLOCK_LOCK_CLIENT_CLIENT_STATE_HPP

#include "lock/acquire/release_listener.hpp"
#include "lock/client/event_sink.hpp"
#include "lock/client/open_work.hpp"
#include "lock/client/resource_keys.hpp"
#include "lock/kinds/lock_kind.hpp"
#include "lock/lease/extend_batcher.hpp"
#include "lock/lease/owned_holds.hpp"
#include "lock/metrics/metrics_recorder.hpp"
#include "lock/nodes/lock_nodes.hpp"
#include "lock/nodes/node_health.hpp"
#include "lock/nodes/replica_waits.hpp"
#include "redis/context_shutdown.hpp"
#include "redis/node_link.hpp"
#include "redis/serial_executor.hpp"
#include <redlock/config.hpp>
#include <redlock/error.hpp>
#include <redlock/redis/connection.hpp>
#include <redlock/redis/script.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/bind_executor.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::detail {

/// What a client shares with its leases and operations: the node connections, the strand that
/// serialises every lock operation's state, and the counters. Kept alive by the client, each
/// lease and each pending operation, so a lease may outlive its client.
class client_state final : public std::enable_shared_from_this<client_state>,
                           public redis::context_shutdown_listener,
                           private lock_nodes {
public:
    using clock = std::chrono::steady_clock;

    /// A client state that drops the handlers it keeps when its executor's context shuts down.
    static std::shared_ptr<client_state> make(boost::asio::any_io_executor ex, client_config cfg);
    /// One whose operations send to `nodes` instead of connecting to cfg's nodes (a scripted
    /// test's fake voters, one per node of `cfg`); its own connections are made, never started.
    static std::shared_ptr<client_state> make_over(boost::asio::any_io_executor ex, client_config cfg,
                                                   std::shared_ptr<lock_nodes> nodes);

    client_state(boost::asio::any_io_executor ex, client_config cfg, std::shared_ptr<lock_nodes> given = {});
    ~client_state();
    client_state(const client_state&) = delete;
    client_state& operator=(const client_state&) = delete;

    [[nodiscard]] std::size_t node_count() const noexcept { return nodes_.size(); }
    /// What the operations send to: the connections to the nodes, or those given to make_over().
    [[nodiscard]] lock_nodes& nodes() noexcept { return given_nodes_ ? *given_nodes_ : *this; }
    [[nodiscard]] const std::string& node_name(std::size_t i) const { return node_names_[i]; }
    [[nodiscard]] std::span<const std::string> node_names() const noexcept { return node_names_; }
    /// A new token for a hold labelled `label`: make_token(), with this host's name, this
    /// process's id and the label recorded in it unless identify_holder is off. Throws
    /// std::system_error as make_token() does.
    [[nodiscard]] std::string make_holder_token(std::string_view label) const;
    /// Node `i`'s way to its data: one server, or a cluster routed by the key's slot.
    [[nodiscard]] redis::detail::node_link& link(std::size_t i) { return *nodes_[i]; }
    [[nodiscard]] const redis::detail::node_link& link(std::size_t i) const { return *nodes_[i]; }
    [[nodiscard]] const client_config& config() const noexcept { return cfg_; }
    [[nodiscard]] const boost::asio::any_io_executor& executor() const noexcept { return ex_; }
    [[nodiscard]] const redis::detail::serial_executor& strand() const noexcept { return strand_; }
    metrics_recorder& metrics() noexcept { return metrics_; }
    /// client_config::on_event's way out; any thread.
    [[nodiscard]] const event_sink& events() const noexcept { return *events_; }
    /// The subscriber connections of waiting acquires; strand only.
    release_listener& listener() noexcept { return listener_; }
    /// This client's fenced reentrant leases, for its re-entries; strand only.
    owned_holds& holds() noexcept { return holds_; }
    /// Its acquires in flight and its leases, and its close (client::async_close); strand only.
    open_work& work() noexcept { return work_; }

    /// The per-node timeout for a lease of `ttl`: `requested` if set, else min(config, ttl / 10),
    /// so that one slow node cannot eat a large part of a short lease.
    [[nodiscard]] std::chrono::milliseconds node_timeout_for(
        std::chrono::milliseconds ttl, std::chrono::milliseconds requested) const noexcept;

    /// A uniformly random retry delay; strand only.
    std::mt19937_64& rng() noexcept { return rng_; }

    /// Whether call_on() runs `call` on node `node` as its steps, one script call per slot.
    [[nodiscard]] bool runs_steps(std::size_t node, const node_call& call) const {
        return !call.steps.empty() && nodes_[node]->routes_by_slot();
    }
    /// Sends `call` (built by a lock's kind) to node `node`; `on_reply(error_code,
    /// std::span<const resp::value>)` runs on the strand with the node's replies, as many as the
    /// call owes, or with the failure: a server error reply to a script is error::server_error
    /// (with the reply), a pipeline answered with a wrong number of replies
    /// error::unexpected_reply. Counts node failures. A template: a round's every reply would
    /// otherwise pay for a type-erased handler.
    template <class OnReply>
    void call_on(std::size_t node, const node_call& call, std::chrono::milliseconds timeout,
                 OnReply on_reply) {
        if (runs_steps(node, call)) {
            run_steps(node, call, timeout,
                      [on_reply = std::move(on_reply)](boost::system::error_code ec, resp::value v) mutable {
                          on_reply(ec, std::span<const resp::value>(&v, 1));
                      });
            return;
        }
        if (call.script && !call.after_script.empty()) {
            eval_then_on(node, *call.script, call.key_span(), call.arg_span(), call.after_script, timeout,
                         std::move(on_reply));
            return;
        }
        if (call.script) {
            eval_on(node, *call.script, call.key_span(), call.arg_span(), timeout,
                    [on_reply = std::move(on_reply)](boost::system::error_code ec, resp::value v) mutable {
                        on_reply(ec, std::span<const resp::value>(&v, 1));
                    });
            return;
        }
        nodes_[node]->exec(
            call.route_key(), call.pipeline, timeout,
            boost::asio::bind_executor(
                strand_,
                [self = shared_from_this(), node, owed = call.replies(), on_reply = std::move(on_reply)](
                    boost::system::error_code ec, std::vector<resp::value> replies) mutable {
                    if (!ec && replies.size() != owed) ec = error::unexpected_reply;
                    if (ec) self->metrics_.node_failure(node, ec);
                    on_reply(ec, std::span<const resp::value>(replies));
                }));
    }
    /// Runs script `s` on node `node` with the commands of `trailer` right behind it on its
    /// connection (node_call::after_script); `on_reply(error_code, std::span<const resp::value>)`
    /// as call_on()'s, with the script's reply first.
    template <class OnReply>
    void eval_then_on(std::size_t node, const redis::script& s, std::span<const std::string_view> keys,
                      std::span<const std::string_view> args, const resp::request& trailer,
                      std::chrono::milliseconds timeout, OnReply on_reply) {
        nodes_[node]->eval_then(
            s, keys, args, trailer, timeout,
            boost::asio::bind_executor(
                strand_, [self = shared_from_this(), node, name = s.name, owed = 1 + trailer.size(),
                          on_reply = std::move(on_reply)](boost::system::error_code ec,
                                                          std::vector<resp::value> replies) mutable {
                    if (!ec && replies.size() != owed) ec = error::unexpected_reply;
                    if (!ec && replies.front().is_error()) self->script_refused(name, replies.front(), ec);
                    if (ec) self->metrics_.node_failure(node, ec);
                    on_reply(ec, std::span<const resp::value>(replies));
                }));
    }
    /// The timeout of releases nobody waits for (failed attempts, cancelled acquires, dropped
    /// leases): long enough to ride out a reconnect, since a missed release holds the resource
    /// until its ttl runs out.
    [[nodiscard]] std::chrono::milliseconds background_timeout() const noexcept;

    /// Inside a reply's handler on the strand: empty, or why node `node`'s grant in that reply
    /// does not count, judged on the cluster master that made it (answering_server.hpp), not on
    /// the slot map, and, when the call asked for it (node_call::ask_replication_id: reply
    /// `replication_id_reply` of `replies`), on the server's replication ID, which a failover
    /// this client did not see changes. `ec` is set to why: node_quarantined, or
    /// unexpected_reply for an INFO reply without the ID.
    [[nodiscard]] std::string why_answer_does_not_count(std::size_t node, std::size_t replication_id_reply,
                                                        std::span<const resp::value> replies,
                                                        boost::system::error_code& ec) const;
    /// A round's answer from node `node`, inside its reply's handler: a grant that does not count
    /// (why_answer_does_not_count) is a failure.
    void judge_answer(std::size_t node, acquire_answer& answer, std::size_t replication_id_reply,
                      std::span<const resp::value> replies) const;
    /// Whether grants are judged on the server's replication ID (client_config::failover_quarantine).
    [[nodiscard]] bool asks_replication_id() const noexcept { return cfg_.failover_quarantine; }
    /// Whether node `node`'s grants on `key` count now (restart and failover quarantines, one
    /// vote per server, see client_config):
    /// a cluster's, whether those of the master serving the key's slot do; strand only.
    [[nodiscard]] bool votes(std::size_t node, std::string_view key) const;
    /// Empty, or why the configuration is unusable: two nodes' INFO reported one run_id (two
    /// addresses of one server, which would vote twice). Known once both have connected.
    [[nodiscard]] std::string same_server_nodes() const;
    /// Why it does not vote on `key`, for messages; empty if it does. Strand only.
    [[nodiscard]] std::string why_not_voting(std::size_t node, std::string_view key) const;
    /// How long node `node` does not vote on `key` for a quarantine (restart or failover); zero
    /// if it votes or does not for another reason. Strand only.
    [[nodiscard]] std::chrono::milliseconds quarantine_left(std::size_t node, std::string_view key) const;
    /// Node `node`'s quarantine state, for metrics (a cluster: all its masters'); any thread.
    [[nodiscard]] node_health_board::view health_of(std::size_t node) const;
    /// Node `node`'s vote `v` on `key` as it counts: a grant of a node in restart quarantine fails; a
    /// request that timed out waiting for a connection says the connection's own error (a
    /// refused password, a certificate that did not verify).
    void admit(std::size_t node, std::string_view key, vote& v, boost::system::error_code& ec,
               std::string& detail);
    /// The quarantine state and the identity of every node.
    [[nodiscard]] const std::shared_ptr<node_health_board>& health() const noexcept { return health_; }

    /// Runs `call`'s steps (a lock over several resources, split by slot) on node `node`, a
    /// Redis Cluster, one after another within `timeout` in all, and undoes an acquire's steps that
    /// granted before one that did not (slot_steps.hpp); `on_reply` as eval_on()'s, with the
    /// reply of the whole call.
    void run_steps(std::size_t node, const node_call& call, std::chrono::milliseconds timeout,
                   std::function<void(boost::system::error_code, resp::value)> on_reply);
    /// A script's error reply `v`, as eval_on() hands it on: server_error in `ec`, and the
    /// script's file named in `v` when Redis names only its SHA-1.
    static void script_refused(std::string_view script_name, resp::value& v, boost::system::error_code& ec);
    /// Runs one script on node `node`; `on_reply` runs on the strand with the reply, or with the
    /// failure (a server error reply is error::server_error, with the reply). Counts node failures.
    void eval_on(
        std::size_t node, const redis::script& s, std::span<const std::string_view> keys,
        std::span<const std::string_view> args, std::chrono::milliseconds timeout,
        std::function<void(boost::system::error_code, resp::value)> on_reply,
        redis::detail::cluster_link::on_tryagain tryagain = redis::detail::cluster_link::on_tryagain::retry);

    /// The context shuts down, so no handler of ours runs again: the extends waiting for their
    /// batch, the WAITs not sent yet and the async_close calls go, as asio drops the handlers it
    /// queued. They own operations that own this state, which would otherwise never be freed.
    void on_context_shutdown() noexcept override;

private:
    // lock_nodes, over the connections: call_on(); extends batched across leases (extend_batcher);
    // replica_waits.
    [[nodiscard]] std::size_t count() const noexcept override { return nodes_.size(); }
    void call(std::size_t node, const node_call& c, std::chrono::milliseconds timeout,
              std::shared_ptr<node_answers> to, call_tag tag) override;
    void extend(std::size_t node, const lock_kind& kind, const std::string& token,
                std::chrono::milliseconds ttl, std::chrono::milliseconds timeout,
                std::shared_ptr<node_answers> to, call_tag tag) override;
    void confirm_replicas(std::size_t node, std::string_view key, int replicas,
                          std::chrono::milliseconds replica_timeout, std::chrono::milliseconds timeout,
                          std::string_view what, std::shared_ptr<node_answers> to, call_tag tag) override;

    /// Per node: the masters a cluster node connected to ("host:port") and their board entries.
    /// Shared with the cluster links, which may outlive the client state by a moment.
    struct cluster_members {
        std::mutex mutex;
        std::vector<std::vector<std::pair<std::string, std::size_t>>> entries;
    };
    static redis::connection_config config_for(const client_config& cfg,
                                               const std::shared_ptr<node_health_board>& health,
                                               const std::shared_ptr<event_sink>& events,
                                               cluster_members& members, std::size_t node,
                                               const std::string& name, bool cluster,
                                               const redis::node_address& address);
    /// The board entry of the cluster master at `address` of node `node`, made if new.
    static std::size_t member_entry_made(node_health_board& health, cluster_members& members,
                                         std::size_t node, const redis::node_address& address);
    // The health of what votes for node `node` on `key` (a cluster's: the master of its slot,
    // named in `whose`); nothing when no master of the slot is known.
    [[nodiscard]] std::optional<node_health_board::view> vote_view(std::size_t node, std::string_view key,
                                                                   std::string& whose) const;
    /// The board entry of the cluster master at `address` of node `node`, if it has one.
    [[nodiscard]] std::optional<std::size_t> member_entry(std::size_t node,
                                                          const redis::node_address& address) const;

    boost::asio::any_io_executor ex_;
    redis::detail::serial_executor strand_;
    client_config cfg_;
    std::shared_ptr<node_health_board> health_;  // before nodes_: their handshakes report to it
    std::shared_ptr<event_sink> events_;         // before nodes_: they tell it of their state
    // A cluster node's masters each have a board entry of their own (after the N nodes' own):
    // a restarted master quarantines the slots it serves, not the cluster.
    std::shared_ptr<cluster_members> members_;
    std::vector<std::unique_ptr<redis::detail::node_link>> nodes_;
    std::vector<std::string> node_names_;
    std::string host_name_;  // for make_holder_token
    metrics_recorder metrics_;
    std::mt19937_64 rng_;
    extend_batcher extends_;
    replica_waits replicas_;
    release_listener listener_;
    owned_holds holds_;
    open_work work_;
    std::shared_ptr<lock_nodes> given_nodes_;  // make_over()'s; null: this client's connections
};

}  // namespace redlock::detail

#endif
