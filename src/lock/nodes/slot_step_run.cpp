// SPDX-License-Identifier: BSL-1.0
// client_state::run_steps: a call of a lock over several resources, split by slot, on a Redis
// Cluster node. The steps go one after another, each when the one before has answered: an
// acquire then takes the slots in one order for everyone, and stops at the first refusal.
#include "lock/client/client_state.hpp"
#include "lock/nodes/slot_steps.hpp"

#include <algorithm>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace redlock::detail {

namespace {

// A step's script call with its keys and arguments copied: it is sent after the call it came
// from, whose views point into strings that may be gone by then.
struct frozen_call {
    const redis::script* script;
    std::vector<std::string> keys;
    std::vector<std::string> args;

    explicit frozen_call(const node_call& c) : script(c.script) {
        for (auto k : c.key_span())
            keys.emplace_back(k);
        for (auto a : c.arg_span())
            args.emplace_back(a);
    }

    void send(client_state& client, std::size_t node, std::chrono::milliseconds timeout,
              std::function<void(boost::system::error_code, resp::value)> on_reply) const {
        const std::vector<std::string_view> key_views(keys.begin(), keys.end());
        const std::vector<std::string_view> arg_views(args.begin(), args.end());
        client.eval_on(node, *script, key_views, arg_views, timeout, std::move(on_reply));
    }

    /// With the commands of `trailer` behind it on the same connection.
    void send_then(
        client_state& client, std::size_t node, const resp::request& trailer,
        std::chrono::milliseconds timeout,
        std::function<void(boost::system::error_code, std::span<const resp::value>)> on_replies) const {
        const std::vector<std::string_view> key_views(keys.begin(), keys.end());
        const std::vector<std::string_view> arg_views(args.begin(), args.end());
        client.eval_then_on(node, *script, key_views, arg_views, trailer, timeout, std::move(on_replies));
    }
};

class step_run final : public std::enable_shared_from_this<step_run> {
public:
    using clock = std::chrono::steady_clock;
    using handler = std::function<void(boost::system::error_code, resp::value)>;

    step_run(std::shared_ptr<client_state> client, std::size_t node, const node_call& call,
             std::chrono::milliseconds timeout, handler on_reply)
        : client_(std::move(client)),
          node_(node),
          fold_(call.merge, call.step_members),
          timeout_(timeout),
          deadline_(clock::now() + timeout),
          on_reply_(std::move(on_reply)) {
        for (const auto& s : call.steps)
            steps_.emplace_back(s);
        for (const auto& u : call.undo)
            undo_.emplace_back(u);
        // An acquire that asks the replication ID asks each step's master, behind its grant.
        const bool acquire =
            call.merge == step_merge::acquire_plain || call.merge == step_merge::acquire_fenced;
        if (acquire && call.replication_id_reply != 0) ask_id_.push("INFO", "replication");
    }

    void next() {
        auto left = timeout_;
        if (timeout_ > timeout_.zero()) {
            left = std::chrono::ceil<std::chrono::milliseconds>(deadline_ - clock::now());
            if (left <= left.zero()) return answered(error::request_timeout, {});
        }
        if (!ask_id_.empty()) {
            steps_[at_].send_then(*client_, node_, ask_id_, left,
                                  [self = shared_from_this()](boost::system::error_code ec,
                                                              std::span<const resp::value> replies) {
                                      self->judged(ec, replies);
                                  });
            return;
        }
        steps_[at_].send(*client_, node_, left,
                         [self = shared_from_this()](boost::system::error_code ec, resp::value v) {
                             self->answered(ec, std::move(v));
                         });
    }

private:
    // Inside the reply's handler, where the client knows the server that answered: a grant
    // that does not count fails the step, which is then undone with those before it.
    void judged(boost::system::error_code ec, std::span<const resp::value> replies) {
        auto v = replies.empty() ? resp::value{} : replies.front();
        if (!ec && is_step_grant(v)) {
            boost::system::error_code refused;
            auto why = client_->why_answer_does_not_count(node_, 1, replies, refused);
            if (!why.empty()) {
                ec = refused;
                v = resp::value{};
                v.kind = resp::type::error;
                v.str = std::move(why);
            }
        }
        answered(ec, std::move(v));
    }

    void answered(boost::system::error_code ec, resp::value v) {
        if (fold_.add(at_, ec, v) && at_ + 1 < steps_.size()) {
            ++at_;
            next();
            return;
        }
        // Nobody waits for these: the whole call's answer does not depend on them.
        const auto undo = std::min(fold_.granted_to_undo(), undo_.size());
        for (std::size_t i = 0; i < undo; ++i)
            undo_[i].send(*client_, node_, client_->background_timeout(), {});
        if (on_reply_) on_reply_(fold_.error(), fold_.reply());
    }

    std::shared_ptr<client_state> client_;
    std::size_t node_;
    std::vector<frozen_call> steps_;
    std::vector<frozen_call> undo_;
    step_fold fold_;
    std::chrono::milliseconds timeout_;  // zero: none
    clock::time_point deadline_;
    handler on_reply_;
    resp::request ask_id_;  // INFO replication behind each step, or empty
    std::size_t at_ = 0;
};

}  // namespace

void client_state::run_steps(std::size_t node, const node_call& call, std::chrono::milliseconds timeout,
                             std::function<void(boost::system::error_code, resp::value)> on_reply) {
    std::make_shared<step_run>(shared_from_this(), node, call, timeout, std::move(on_reply))->next();
}

}  // namespace redlock::detail
