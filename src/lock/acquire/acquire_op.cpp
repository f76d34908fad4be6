// SPDX-License-Identifier: BSL-1.0
#include "lock/acquire/acquire_op.hpp"

#include "detail/completion.hpp"
#include "lock/acquire/round_report.hpp"
#include "lock/kinds/kind_choice.hpp"
#include "lock/lease/lease_grant.hpp"
#include <redlock/error.hpp>

#include <boost/asio/error.hpp>

#include <utility>

namespace redlock::detail {

namespace asio = boost::asio;
using boost::system::error_code;
using clock = std::chrono::steady_clock;

acquire_op::acquire_op(std::shared_ptr<client_state> client, std::string resource, lock_options options,
                       diagnostics* diag, acquire_handler handler, std::vector<std::string> resources)
    : client_(std::move(client)),
      resource_(std::move(resource)),
      resources_(std::move(resources)),
      options_(std::move(options)),
      diag_(diag),
      handler_(std::move(handler)),
      context_(*client_) {}

void acquire_op::start() {
    if (completed_) return;  // cancelled before it started
    std::shared_ptr<const lock_kind> kind;
    std::string why;
    error_code ec = error::client_closed;
    if (client_->work().closing.load(std::memory_order_relaxed)) {
        why = "acquire \"" + resource_ + "\": the client is closed";
    } else {
        client_->work().add(shared_from_this());
        ec = choose_lock_kind(*client_, resource_, resources_, options_, {}, kind, why);
    }
    if (ec) return refuse(ec, std::move(why));
    fsm_.emplace(acquire_setup_of(*client_, resource_, std::move(resources_), std::move(options_),
                                  std::move(kind), diag_ != nullptr),
                 context_);
    resume(acquire_event::of(acquire_event::type::start));
}

void acquire_op::cancel() {
    if (fsm_) return resume(acquire_event::of(acquire_event::type::cancel));
    if (!completed_)
        refuse(asio::error::operation_aborted, "acquire \"" + resource_ + "\": cancelled after 0 attempt(s)");
}

void acquire_op::refuse(error_code ec, std::string why) {
    client_->metrics().acquire_failed(ec);
    complete(ec, lease(), std::move(why));
}

void acquire_op::resume(const acquire_event& e) {
    if (!fsm_) return;
    if (running_) {
        // An event while the last one's actions run (a reply completed at once): after them, in
        // order, with its replies kept until then.
        deferred_.push_back(deferred_event{e, std::vector<resp::value>(e.replies.begin(), e.replies.end()),
                                           std::string(e.text)});
        return;
    }
    running_ = true;
    auto resume_with = [this](const acquire_event& event) {
        for (auto& a : fsm_->resume(event, clock::now(), client_->rng()))
            run(a);
    };
    resume_with(e);
    for (std::size_t i = 0; i < deferred_.size(); ++i) {  // more may come meanwhile
        auto later = std::move(deferred_[i]);
        later.event.replies = later.replies;
        later.event.text = later.text;
        resume_with(later.event);
    }
    deferred_.clear();
    running_ = false;
}

void acquire_op::run(acquire_action& a) {
    using type = acquire_action::type;
    switch (a.what) {
        case type::send:
            send(a);
            return;
        case type::confirm_replicas:
            client_->nodes().confirm_replicas(a.node, a.key, a.replicas, a.replica_timeout, a.timeout, "",
                                              shared_from_this(), {0, a.round});
            return;
        case type::sleep_until:
            sleep_until(a.at, a.sleep);
            return;
        case type::end_sleep:
            if (timer_) timer_->cancel();
            return;
        case type::listen:
            listening_.move_to(client_->listener(), *a.channel, a.listed, weak_from_this());
            return;
        case type::finish:
            finish(a);
            return;
    }
}

void acquire_op::send(const acquire_action& a) {
    auto& nodes = client_->nodes();
    // Nobody waits for a release's answer.
    const auto to = a.reply ? shared_from_this() : nullptr;
    const call_tag tag{a.reply ? static_cast<unsigned>(*a.reply) : 0U, a.round};
    for (std::size_t i = 0; i < nodes.count(); ++i) {
        if (a.nodes && !(*a.nodes)[i]) continue;
        nodes.call(i, *a.call, a.timeout, to, tag);
    }
}

void acquire_op::sleep_until(clock::time_point at, unsigned sleep) {
    if (!timer_) timer_.emplace(client_->strand());  // at the first: most acquisitions never sleep
    timer_->expires_at(at);                          // a wait of an earlier sleep ends, aborted
    timer_->async_wait([self = shared_from_this(), sleep](error_code ec) {
        if (ec != asio::error::operation_aborted) self->resume(acquire_event::sleep_ended_for(sleep));
    });
}

void acquire_op::finish(acquire_action& a) {
    // A waiter woken by a release that names this client, cancelled before it could try,
    // hands the wake on: the release was meant for someone still waiting. A woken waiter
    // otherwise tries at once, and a try that fails lost to one that won.
    listening_.drop(client_->listener(), a.ec == asio::error::operation_aborted
                                             ? release_listener::leaving::without_trying
                                             : release_listener::leaving::after_trying);
    lease held;
    if (a.won) held = lease(grant_lease(client_, std::move(*a.won), fsm_->options(), a.at));
    if (!a.ec && client_->events().wanted()) {
        client_->events().emit(resource_event(event_kind::acquired, resource_, {},
                                              a.handed_over ? "handed over by the release" : "",
                                              std::chrono::duration_cast<std::chrono::milliseconds>(a.took)));
    }
    complete(a.ec, std::move(held), std::move(a.message));
}

void acquire_op::complete(error_code ec, lease l, std::string message) {
    if (completed_) return;
    completed_ = true;
    if (diag_) {
        diag_->message = std::move(message);
        diag_->attempts = fsm_ ? fsm_->attempts() : 0;
        diag_->nodes = fsm_ ? fsm_->outcomes() : round_report(client_->node_names(), "", "").outcomes();
    }
    complete_on_handler_executor(std::move(handler_), client_->executor(), ec, std::move(l));
}

}  // namespace redlock::detail
