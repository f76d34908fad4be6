// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_TEST_UNIT_SCRIPTED_NODES_HPP
#define REDLOCK_TEST_UNIT_SCRIPTED_NODES_HPP

// Fake voters for a client (client_state::make_over): every call the operations send is
// recorded, and the test answers it, or leaves it unanswered, as it likes. Answers reach the
// caller on the client's strand, as the connections' do. No socket.

#include "lock/nodes/lock_nodes.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/post.hpp>

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace redlock::test {

class scripted_nodes final : public detail::lock_nodes {
public:
    /// One call sent to one node.
    struct sent {
        std::size_t node = 0;
        /// The script's name ("acquire", "release", "extend", ...), "pipeline", or "WAIT" for a
        /// confirm_replicas.
        std::string what;
        std::shared_ptr<detail::node_answers> to;  ///< null: nobody waits for the answer
        detail::call_tag tag;
        std::size_t owed = 1;            ///< how many replies the call owes
        std::size_t replication_id = 0;  ///< which of them is INFO replication's; 0: none
        bool answered = false;
    };

    explicit scripted_nodes(std::size_t count) : count_(count) {}

    /// Where answers go: the client's strand (set once the client is made).
    void answer_on(boost::asio::any_io_executor strand) { strand_ = std::move(strand); }

    [[nodiscard]] std::size_t count() const noexcept override { return count_; }
    void call(std::size_t node, const detail::node_call& c, milliseconds,
              std::shared_ptr<detail::node_answers> to, detail::call_tag tag) override {
        record(node, c.script ? std::string(c.script->name) : std::string("pipeline"), std::move(to), tag,
               c.replies(), c.replication_id_reply);
    }
    void extend(std::size_t node, const detail::lock_kind&, const std::string&, milliseconds, milliseconds,
                std::shared_ptr<detail::node_answers> to, detail::call_tag tag) override {
        record(node, "extend", std::move(to), tag);
    }
    void confirm_replicas(std::size_t node, std::string_view, int, milliseconds, milliseconds,
                          std::string_view, std::shared_ptr<detail::node_answers> to,
                          detail::call_tag tag) override {
        record(node, "WAIT", std::move(to), tag);
    }

    /// Every call so far, in the order sent.
    [[nodiscard]] std::vector<sent>& calls() noexcept { return calls_; }
    /// The calls named `what` not answered yet.
    [[nodiscard]] std::vector<sent*> pending(std::string_view what) {
        std::vector<sent*> out;
        for (auto& c : calls_)
            if (!c.answered && c.what == what) out.push_back(&c);
        return out;
    }
    /// How many calls named `what` went to `node`.
    [[nodiscard]] std::size_t sent_to(std::size_t node, std::string_view what) const {
        std::size_t n = 0;
        for (const auto& c : calls_)
            n += c.node == node && c.what == what ? 1 : 0;
        return n;
    }

    /// Answers `c` with `replies` (or fails it with `ec`), on the strand.
    void answer(sent& c, std::vector<resp::value> replies, boost::system::error_code ec = {}) {
        c.answered = true;
        if (!c.to) return;
        boost::asio::post(
            strand_, [to = std::move(c.to), tag = c.tag, node = c.node, ec, replies = std::move(replies)] {
                to->on_node_answer(tag, node, ec, replies);
            });
    }
    /// Drops the callers of the calls never answered, as a connection closed with them does:
    /// they hold their operations, which hold the client, which holds these nodes.
    void forget() noexcept {
        for (auto& c : calls_)
            c.to.reset();
    }

private:
    void record(std::size_t node, std::string what, std::shared_ptr<detail::node_answers> to,
                detail::call_tag tag, std::size_t owed = 1, std::size_t replication_id = 0) {
        calls_.push_back(sent{node, std::move(what), std::move(to), tag, owed, replication_id, false});
    }

    std::size_t count_;
    boost::asio::any_io_executor strand_;
    std::vector<sent> calls_;
};

}  // namespace redlock::test

#endif
