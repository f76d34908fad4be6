// SPDX-License-Identifier: BSL-1.0
// A connection's requests: admission (the queue's bound, the clock held during the first
// connect), the coalesced flush, one timer for every timeout, cancellation, scripts (EVALSHA
// with its EVAL fallback) and subscriptions. The lifecycle and the loops are in connection.cpp.
#include "redis/connection_impl.hpp"
#include "redis/script_call.hpp"
#include <redlock/error.hpp>

#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>

#include <algorithm>
#include <utility>

namespace redlock::redis {

using redlock::detail::complete_on_handler_executor;

namespace {

using detail::clock_type;
using detail::connect_handler;
using detail::exec_handler;

bool cancels_written(asio::cancellation_type t) {
    return (t & (asio::cancellation_type::terminal | asio::cancellation_type::partial)) !=
           asio::cancellation_type::none;
}

}  // namespace

void connection::impl::submit(std::string payload, std::size_t commands, std::chrono::milliseconds timeout,
                              exec_handler h) {
    auto slot = asio::get_associated_cancellation_slot(h);
    auto op = std::make_shared<exec_op>(std::move(payload), commands, std::move(h), ex_);
    if (timeout > timeout.zero()) op->set_deadline(clock_type::now() + timeout);
    if (slot.is_connected()) {
        slot.assign(
            [weak_self = weak_from_this(), weak_op = std::weak_ptr<exec_op>(op)](asio::cancellation_type t) {
                auto s = weak_self.lock();
                if (!s) return;
                asio::post(s->strand_, [s, weak_op, t] {
                    if (auto o = weak_op.lock()) s->cancel_exec(o, t);
                });
            });
    }
    if (detail::running_in(strand_)) {
        admit(std::move(op));
        return;
    }
    asio::post(strand_,
               [self = shared_from_this(), op = std::move(op)]() mutable { self->admit(std::move(op)); });
}

void connection::impl::admit(std::shared_ptr<exec_op> op) {
    if (closed_) {
        op->complete_later(error::connection_closed);
        return;
    }
    if (refused_as_full()) {
        op->complete_later(error::queue_full);
        return;
    }
    if (running_ && !first_attempt_done_ && op->deadline() != clock_type::time_point::max()) {
        // The request's clock starts when the first connection attempt ends: a client connects
        // at construction, and an acquire made right after must not fail because the TCP and
        // TLS handshakes and the script loads took longer than a node's answer may. The
        // attempt itself is bounded by connect_timeout.
        clocks_on_hold_.push_back({op, op->deadline() - clock_type::now()});
        op->set_deadline(clock_type::time_point::max());
    } else {
        arm_request_timer(op->deadline());
    }
    enqueue(std::move(op));
}

bool connection::impl::refused_as_full() {
    if (cfg_.max_queued_requests == 0 || mux_.queued() < cfg_.max_queued_requests) return false;
    update_stats([](connection_stats& s) { ++s.rejected_queue_full; });
    return true;
}

void connection::impl::start_held_clocks() {
    first_attempt_done_ = true;
    const auto now = clock_type::now();
    for (auto& [weak_op, timeout] : std::exchange(clocks_on_hold_, {})) {
        auto op = weak_op.lock();
        if (!op || op->status() == exec_entry::state::finished) continue;
        op->set_deadline(now + timeout);
        arm_request_timer(op->deadline());
    }
}

void connection::impl::enqueue(std::shared_ptr<exec_entry> e) {
    if (closed_) {
        e->on_complete(error::connection_closed);
        return;
    }
    mux_.add(std::move(e));
    // A long turn writes in slices, so the server works on the first requests while we
    // produce the rest: on few cores that overlap is worth more than fewer writes.
    if (mux_.staged() >= flush_slice && writer_waiting_ && !closed_) {
        flush();
    } else {
        schedule_flush();
    }
}

void connection::impl::schedule_flush() {
    if (flush_scheduled_ || !writer_waiting_) return;  // a busy writer takes them after its write
    flush_scheduled_ = true;
    asio::post(strand_, [self = shared_from_this()] {
        self->flush_scheduled_ = false;
        self->flush();
    });
}

void connection::impl::flush() {
    if (!writer_waiting_ || closed_ || !mux_.has_staged()) return;
    if (!mux_.awaiting_replies()) last_progress_ = clock_type::now();
    std::string_view bytes = mux_.prepare_write();
    // TLS records are written by the writer coroutine (transport::write_now writes none).
    error_code ec;
    const std::size_t n = transport_.write_now(bytes, ec);
    if (!ec && n == bytes.size()) {
        update_stats([](connection_stats& s) { ++s.writes; });
        return;
    }
    unwritten_ = bytes.substr(n);
    write_error_ = ec;
    wake_writer();
}

void connection::impl::wake_writer() {
    if (writer_waiting_) {
        writer_waiting_ = false;
        writer_cv_.cancel();
    }
}

void connection::impl::arm_request_timer(clock_type::time_point deadline) {
    if (deadline >= request_timer_at_) return;
    request_timer_at_ = deadline;
    request_timer_.expires_at(deadline);
    request_timer_.async_wait([self = weak_from_this()](error_code ec) {
        auto s = self.lock();
        if (ec || !s || s->closed_) return;  // re-armed earlier, or closed
        s->request_timer_at_ = clock_type::time_point::max();
        auto next = s->mux_.expire(clock_type::now(), error::request_timeout);
        s->arm_request_timer(next);
    });
}

void connection::impl::cancel_exec(const std::shared_ptr<exec_op>& op, asio::cancellation_type t) {
    if (cancels_written(t) || op->status() == exec_entry::state::staged) {
        mux_.cancel(op, asio::error::operation_aborted);
    }
}

void connection::impl::notify_connect_waiters(error_code ec) {
    auto waiters = std::move(connect_waiters_);
    connect_waiters_.clear();
    for (auto& w : waiters) {
        if (w->handler) complete_on_handler_executor(std::move(w->handler), ex_, ec);
    }
}

void connection::impl::cancel_connect_waiter(const std::shared_ptr<connect_waiter>& w) {
    auto it = std::find(connect_waiters_.begin(), connect_waiters_.end(), w);
    if (it == connect_waiters_.end()) return;
    connect_waiters_.erase(it);
    if (w->handler)
        complete_on_handler_executor(std::move(w->handler), ex_, error_code(asio::error::operation_aborted));
}

void connection::send_subscription(const resp::request& req, std::string push_kind, std::size_t channels,
                                   std::function<void(const resp::value&)> on_refused) {
    if (req.empty() || channels == 0) return;
    asio::dispatch(impl_->strand_, [self = impl_, payload = req.payload(), kind = std::move(push_kind),
                                    channels, on_refused = std::move(on_refused)]() mutable {
        if (self->refused_as_full()) {
            // Refused as a request would be. An UNSUBSCRIBE dropped leaves a channel whose
            // messages nobody reads; a SUBSCRIBE's caller falls back from the refusal, which
            // comes later, never inside the call (it may be in the middle of its own bookkeeping).
            resp::value full;
            full.kind = resp::type::error;
            full.str = "QUEUEFULL the connection to " + self->node() + " already has max_queued_requests (" +
                       std::to_string(self->cfg_.max_queued_requests) + ") requests waiting";
            self->set_last_error(error::queue_full, full.str);
            if (on_refused) {
                asio::post(self->strand_, [on_refused = std::move(on_refused), full = std::move(full)] {
                    on_refused(full);
                });
            }
            return;
        }
        auto refused = [weak = std::weak_ptr<impl>(self),
                        on_refused = std::move(on_refused)](const resp::value& v) {
            if (auto s = weak.lock()) {
                s->set_last_error(error::server_error,
                                  "node " + s->node() + " refused a subscription: " + v.str);
            }
            if (on_refused) on_refused(v);
        };
        self->subscribed_ = self->subscribed_ || kind == "subscribe" || kind == "ssubscribe";
        self->enqueue(std::make_shared<subscription_op>(std::move(payload), channels, std::move(kind),
                                                        std::move(refused)));
    });
}

void connection::async_connect_impl(connect_handler h) {
    auto slot = asio::get_associated_cancellation_slot(h);
    // Move-constructed: any_completion_handler's move assignment is broken in Boost 1.81.
    auto waiter = std::make_shared<connect_waiter>(connect_waiter{std::move(h)});
    if (slot.is_connected()) {
        slot.assign([weak_self = std::weak_ptr<impl>(impl_),
                     weak_waiter = std::weak_ptr<connect_waiter>(waiter)](asio::cancellation_type) {
            auto s = weak_self.lock();
            if (!s) return;
            asio::post(s->strand_, [s, weak_waiter] {
                if (auto w = weak_waiter.lock()) s->cancel_connect_waiter(w);
            });
        });
    }
    asio::post(impl_->strand_, [self = impl_, waiter = std::move(waiter)]() mutable {
        if (self->closed_) {
            complete_on_handler_executor(std::move(waiter->handler), self->ex_,
                                         error_code(error::connection_closed));
            return;
        }
        if (self->connected_) {
            complete_on_handler_executor(std::move(waiter->handler), self->ex_, error_code());
            return;
        }
        self->connect_waiters_.push_back(std::move(waiter));
        self->start();
    });
}

void connection::async_exec_impl(std::string payload, std::size_t commands, std::chrono::milliseconds timeout,
                                 exec_handler h) {
    if (commands == 0) {
        // Nothing to send: complete as if posted, never inline.
        asio::post(impl_->strand_, [h = std::move(h), ex = impl_->ex_]() mutable {
            complete_on_handler_executor(std::move(h), ex, error_code{}, std::vector<resp::value>{});
        });
        return;
    }
    impl_->submit(std::move(payload), commands, timeout, std::move(h));
}

std::string connection::make_evalsha(const script& s, std::span<const std::string_view> keys,
                                     std::span<const std::string_view> args) {
    return detail::evalsha_payload(s, keys, args);
}

void connection::async_eval_impl(script s, std::string evalsha_payload, std::chrono::milliseconds timeout,
                                 asio::any_completion_handler<void(error_code, resp::value)> h) {
    // Runs after each round trip. It exposes the user's executor and cancellation slot, so the
    // EVAL retry is cancelled and completed exactly like the EVALSHA before it.
    struct step {
        std::shared_ptr<impl> self;
        script s;
        std::string evalsha;  // kept for the NOSCRIPT fallback; empty once it was used
        std::chrono::milliseconds timeout;
        asio::any_completion_handler<void(error_code, resp::value)> handler;

        using cancellation_slot_type = asio::cancellation_slot;
        cancellation_slot_type get_cancellation_slot() const noexcept {
            return handler.get_cancellation_slot();
        }
        using executor_type = asio::any_completion_executor;
        executor_type get_executor() const noexcept {
            return asio::get_associated_executor(handler, self->ex_);
        }

        void operator()(error_code ec, std::vector<resp::value> replies) {
            if (!ec && replies.size() != 1) ec = error::unexpected_reply;
            if (ec) {
                std::move(handler)(ec, resp::value{});
                return;
            }
            if (!evalsha.empty() && detail::lacks_script(replies[0])) {
                std::string eval = detail::eval_payload(s, evalsha);
                evalsha.clear();
                auto target = self;
                target->submit(std::move(eval), 1, timeout, std::move(*this));
                return;
            }
            std::move(handler)(error_code{}, std::move(replies[0]));
        }
    };
    std::string first = evalsha_payload;
    impl_->submit(std::move(first), 1, timeout,
                  step{impl_, s, std::move(evalsha_payload), timeout, std::move(h)});
}

}  // namespace redlock::redis
