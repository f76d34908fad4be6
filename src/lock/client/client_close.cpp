// SPDX-License-Identifier: BSL-1.0
#include "lock/client/client_close.hpp"

#include "detail/completion.hpp"
#include "lock/acquire/acquire_op.hpp"
#include "lock/lease/lease_ops.hpp"
#include "lock/lease/lease_runner.hpp"
#include "lock/lease/lease_state.hpp"

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/post.hpp>

namespace redlock::detail {

namespace asio = boost::asio;
using boost::system::error_code;

namespace {

class close_op : public std::enable_shared_from_this<close_op> {
public:
    close_op(std::shared_ptr<client_state> client, bool release_leases)
        : client_(std::move(client)), release_leases_(release_leases) {}

    void start() {
        auto& work = client_->work();
        for (auto& op : work.take_acquires())
            op->cancel();
        for (auto& lease : work.take_leases()) {
            if (!release_leases_) {
                if (lease->fsm.leave(lease_event::client_closed).end)
                    resume_lease(lease, lease_input::ended_by(lease_event::client_closed));
                continue;
            }
            if (!lease->fsm.leave(lease_event::release_called).end) continue;  // released or lost already
            ++pending_;
            start_release(lease, nullptr,
                          asio::bind_executor(client_->strand(),
                                              [self = shared_from_this()](error_code) { self->one_done(); }));
        }
        one_done();  // the start's own count
    }

private:
    void one_done() {
        if (--pending_ > 0) return;
        // Off the lists of waiting clients, so that no release names this one after it.
        client_->listener().leave_all();
        // Then every connection answers what was sent on it before, the cancelled acquires'
        // cleanups and the unlistings too (a cluster's: on each master's connection, not only
        // slot 0's).
        pending_ = static_cast<int>(client_->node_count());
        for (std::size_t i = 0; i < client_->node_count(); ++i)
            client_->link(i).drain(client_->background_timeout(),
                                   [self = shared_from_this()] { self->drained_one(); });
    }

    void drained_one() {
        if (--pending_ > 0) return;
        client_->listener().close();
        for (std::size_t i = 0; i < client_->node_count(); ++i)
            client_->link(i).close();
        auto& work = client_->work();
        work.closed = true;
        auto waiters = std::move(work.close_waiters);
        work.close_waiters.clear();
        for (auto& h : waiters)
            complete_on_handler_executor(std::move(h), client_->executor(), error_code{});
    }

    std::shared_ptr<client_state> client_;
    bool release_leases_;
    int pending_ = 1;
};

}  // namespace

void start_close(std::shared_ptr<client_state> client, bool release_leases,
                 open_work::close_handler handler) {
    auto strand = client->strand();
    asio::post(strand, [client = std::move(client), release_leases, h = std::move(handler)]() mutable {
        auto& work = client->work();
        if (work.closed) {
            complete_on_handler_executor(std::move(h), client->executor(), error_code{});
            return;
        }
        work.close_waiters.push_back(std::move(h));
        if (work.closing.exchange(true)) return;  // the first close completes every one
        std::make_shared<close_op>(std::move(client), release_leases)->start();
    });
}

}  // namespace redlock::detail
