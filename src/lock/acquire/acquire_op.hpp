// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_LOCK_ACQUIRE_ACQUIRE_OP_HPP
#define REDLOCK_LOCK_ACQUIRE_ACQUIRE_OP_HPP

#include "lock/acquire/acquire_fsm.hpp"
#include "lock/acquire/client_acquire_context.hpp"
#include "lock/acquire/release_listener.hpp"
#include "lock/acquire/start_acquire.hpp"
#include "lock/client/cancel_on_slot.hpp"
#include "lock/client/client_state.hpp"
#include <redlock/diagnostics.hpp>
#include <redlock/lease.hpp>
#include <redlock/lock_options.hpp>

#include <boost/asio/steady_timer.hpp>
#include <boost/system/error_code.hpp>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::detail {

/// One async_acquire: the executor of its acquire_fsm. Each event (a reply, a timer, a
/// message, a cancel) goes to the fsm, and the actions that come back are run: calls sent to
/// the nodes, WAITs, the sleep's timer, the listener's registration, and at the end the lease
/// (lease_grant) and the caller's completion. It decides nothing itself. On the client's strand.
class acquire_op final : public std::enable_shared_from_this<acquire_op>,
                         public release_waiter,
                         public node_answers {
public:
    /// `resources`: several resources at once (sorted, distinct, at least two), `resource` naming
    /// them for messages; empty: the one `resource`.
    acquire_op(std::shared_ptr<client_state> client, std::string resource, lock_options options,
               diagnostics* diag, acquire_handler handler, std::vector<std::string> resources = {});

    // On the initiating thread, before start().
    void connect_cancellation() { cancel_on_slot(handler_, shared_from_this(), client_->strand()); }

    void start();
    void cancel();

    // What wakes a waiter (see release_waiter): each is an event of the fsm.
    void on_released() override { resume(acquire_event::of(acquire_event::type::released)); }
    void on_handoff(std::size_t node, std::string_view round_token) override {
        resume(acquire_event::handoff_from(node, round_token));
    }
    void on_subscribed() override { resume(acquire_event::of(acquire_event::type::subscribed)); }
    void on_subscription_refused(std::string_view why) override {
        resume(acquire_event::of(acquire_event::type::subscription_refused, why));
    }

    // What the nodes answer (see node_answers): events of the fsm, of the type and round sent.
    void on_node_answer(call_tag tag, std::size_t node, boost::system::error_code ec,
                        std::span<const resp::value> replies) override {
        resume(acquire_event::from_node(static_cast<acquire_event::type>(tag.what), tag.round, node, ec,
                                        replies));
    }
    void on_replicas(call_tag tag, std::size_t node, replication_verdict verdict) override {
        resume(acquire_event::replicas_of(tag.round, node, std::move(verdict)));
    }

private:
    void resume(const acquire_event& e);
    void run(acquire_action& a);
    void send(const acquire_action& a);
    void sleep_until(std::chrono::steady_clock::time_point at, unsigned sleep);
    void finish(acquire_action& a);
    // Before the fsm: a closed client, options it refuses, a cancel before the start.
    void refuse(boost::system::error_code ec, std::string why);
    void complete(boost::system::error_code ec, lease l, std::string message);

    std::shared_ptr<client_state> client_;
    std::string resource_;
    std::vector<std::string> resources_;
    lock_options options_;
    diagnostics* diag_;
    acquire_handler handler_;
    client_acquire_context context_;
    std::optional<acquire_fsm> fsm_;                  // made by start(), once the lock's kind is chosen
    std::optional<boost::asio::steady_timer> timer_;  // the sleep between rounds
    // An event that came while the actions of another ran, with what it points to.
    struct deferred_event {
        acquire_event event;
        std::vector<resp::value> replies;
        std::string text;
    };
    std::vector<deferred_event> deferred_;  // a vector: a deque allocates when made
    bool running_ = false;                  // resume() runs actions
    listener_registration listening_;
    bool completed_ = false;
};

}  // namespace redlock::detail

#endif
