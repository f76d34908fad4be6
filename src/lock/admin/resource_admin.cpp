// SPDX-License-Identifier: BSL-1.0
// An operator's view of a resource and an operator's release of it: each one script call to
// every node, gathered once all have answered or timed out (no quorum decides early: an
// operator wants to see, or free, every node).
#include "lock/admin/resource_admin.hpp"

#include "detail/completion.hpp"
#include "lock/acquire/lock_options_check.hpp"
#include "lock/acquire/quorum.hpp"
#include "lock/client/cancel_on_slot.hpp"
#include "lock/client/resource_keys.hpp"
#include "lock/kinds/hold_reading.hpp"
#include "lock/kinds/kind_keys.hpp"
#include "lock/kinds/lock_kind.hpp"
#include "scripts/scripts_gen.hpp"
#include <redlock/error.hpp>

#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>

#include <algorithm>
#include <functional>
#include <map>
#include <utility>
#include <vector>

namespace redlock::detail {

namespace {

namespace asio = boost::asio;
using boost::system::error_code;

/// Sends one script call to every node and hands each answer to `on_answer`, then completes
/// once all are in; cancellable (the commands already sent still run).
template <class Handler, class Result>
class node_sweep final : public std::enable_shared_from_this<node_sweep<Handler, Result>>,
                         public node_answers {
public:
    using answer_fn = std::function<void(std::size_t node, error_code, const resp::value&, Result&)>;

    node_sweep(std::shared_ptr<client_state> client, Handler h, Result result, answer_fn on_answer)
        : client_(std::move(client)),
          handler_(std::move(h)),
          result_(std::move(result)),
          on_answer_(std::move(on_answer)),
          pending_(client_->node_count()) {}

    void connect_cancellation() { cancel_on_slot(handler_, this->shared_from_this(), client_->strand()); }

    void cancel() { finish(asio::error::operation_aborted); }

    /// Runs `script` with `keys` (all of one resource, so of one cluster slot) on every node.
    void start(const redis::script& script, std::vector<std::string> keys) {
        keys_ = std::move(keys);
        call_.script = &script;
        for (const auto& k : keys_)
            call_.key(k);
        asio::post(client_->strand(), [self = this->shared_from_this()] {
            if (self->done_) return;
            self->client_->nodes().call_all(self->call_, self->client_->config().node_timeout, self, {});
        });
    }

    void on_node_answer(call_tag, std::size_t node, error_code ec,
                        std::span<const resp::value> replies) override {
        on_reply(node, ec, replies.empty() ? resp::value{} : replies.front());
    }

private:
    void on_reply(std::size_t node, error_code ec, const resp::value& v) {
        if (done_) return;
        if (!ec && v.is_error()) ec = error::server_error;
        if (!ec) ++answered_;
        on_answer_(node, ec, v, result_);
        if (--pending_ == 0) {
            // Fewer than a quorum answered: what they said is not what the lock decides by.
            finish(answered_ >= quorum_of(client_->node_count()) ? error_code() : error::quorum_unreachable);
        }
    }

    void finish(error_code ec) {
        if (done_) return;
        done_ = true;
        complete_on_handler_executor(std::move(handler_), client_->executor(), ec, std::move(result_));
    }

    std::shared_ptr<client_state> client_;
    Handler handler_;
    Result result_;
    answer_fn on_answer_;
    std::size_t pending_;
    std::size_t answered_ = 0;
    std::vector<std::string> keys_;  // what call_'s views point to
    node_call call_;
    bool done_ = false;
};

template <class Handler, class Result>
bool refuse_bad_resource(const client_state& client, const std::string& resource, Handler& handler,
                         Result& empty) {
    std::string why;
    const auto ec = validate_resource(client.config(), resource, why);
    if (!ec) return false;
    asio::post(client.executor(),
               [h = std::move(handler), ex = client.executor(), ec, r = std::move(empty)]() mutable {
                   complete_on_handler_executor(std::move(h), ex, ec, std::move(r));
               });
    return true;
}

}  // namespace

void agree_on_holders(inspection& i) {
    std::map<std::string, std::size_t> listed;
    std::map<std::string, std::size_t> owners;
    i.fence = 0;
    for (const auto& n : i.nodes) {
        if (n.error) continue;
        i.fence = std::max(i.fence, n.fence);
        for (const auto& h : n.holders)
            ++listed[h];
        if (!n.owner.empty()) ++owners[n.owner];
    }
    i.holders.clear();
    i.owner.clear();
    for (const auto& [holder, count] : listed)
        if (count >= i.quorum) i.holders.push_back(holder);
    for (const auto& [owner, count] : owners)
        if (count >= i.quorum) i.owner = owner;
}

void start_inspect(std::shared_ptr<client_state> client, std::string resource, inspect_handler handler) {
    inspection empty;
    empty.resource = resource;
    empty.quorum = quorum_of(client->node_count());
    if (refuse_bad_resource(*client, resource, handler, empty)) return;
    empty.nodes.resize(client->node_count());
    for (std::size_t i = 0; i < empty.nodes.size(); ++i)
        empty.nodes[i].node = client->node_name(i);
    auto on_answer = [](std::size_t node, error_code ec, const resp::value& v, inspection& r) {
        auto& n = r.nodes[node];
        if (!ec && !read_node_inspection(v, n)) {
            ec = error::unexpected_reply;
            auto name = std::move(n.node);
            n = node_inspection{};
            n.node = std::move(name);
            n.detail = resp::to_string(v);
        }
        if (ec) {
            n.error = ec;
            if (v.is_error()) n.detail = v.str;
        }
        agree_on_holders(r);
    };
    auto op = std::make_shared<node_sweep<inspect_handler, inspection>>(
        client, std::move(handler), std::move(empty), std::move(on_answer));
    const auto keys = keys_for(client->config().key_prefix, resource);
    op->connect_cancellation();
    op->start(scripts::inspect, inspected_keys(keys));
}

void start_force_release(std::shared_ptr<client_state> client, std::string resource,
                         force_release_handler handler) {
    std::size_t none = 0;
    if (refuse_bad_resource(*client, resource, handler, none)) return;
    auto on_answer = [](std::size_t, error_code ec, const resp::value& v, std::size_t& freed) {
        if (!ec && v.kind == resp::type::integer && v.integer == 1) ++freed;
    };
    auto op = std::make_shared<node_sweep<force_release_handler, std::size_t>>(client, std::move(handler),
                                                                               none, std::move(on_answer));
    const auto keys = keys_for(client->config().key_prefix, resource);
    op->connect_cancellation();
    op->start(scripts::force_release, force_released_keys(keys));
}

}  // namespace redlock::detail
