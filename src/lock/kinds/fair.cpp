// SPDX-License-Identifier: BSL-1.0
// A fair (FIFO) lock: fair.lua keeps a queue of places by ticket beside the lock key; a
// release hands the lock over to the head of the queue and wakes it alone.
#include "lock/kinds/kind_keys.hpp"
#include "lock/kinds/lock_kind.hpp"
#include "lock/kinds/script_answers.hpp"
#include "scripts/scripts_gen.hpp"

namespace redlock::detail {

namespace {

class fair_kind final : public lock_kind {
public:
    fair_kind(resource_keys keys, const lock_options& o, std::string place)
        : lock_kind(std::move(keys), o),
          queue_keys_(fair_keys_for(this->keys())),
          place_(std::move(place)),
          wake_channel_(queue_keys_.wake_prefix + place_),
          queue_timeout_text_(std::to_string(o.queue_timeout.count())) {}

    // Our place in the queue, numbered once a quorum has, kept until the lock is handed to us.
    [[nodiscard]] between_rounds kept_between_rounds() const noexcept override {
        between_rounds kept;
        kept.leaves_trace = true;
        kept.queued = true;
        kept.place = place_;
        kept.wake_channel = wake_channel_;
        return kept;
    }

    // Numbered, not drawn: the place is the acquisition's secret already, and fair.lua tells
    // an earlier round of ours from a later one by the number.
    [[nodiscard]] std::string round_value(unsigned round) const override {
        return place_ + '.' + std::to_string(round);
    }

    // Take the lock if it is free and we are the head of its queue (or nobody queues), else
    // keep our place in the queue.
    void acquire(const round_request& r, node_call& out) const override {
        // Without a ticket yet, a single node numbers us itself ("local"); N > 1 nodes each hand
        // out a number ("none"), and the round takes the largest of a quorum before we queue.
        out.owned[0] = r.ticket != 0 ? std::to_string(r.ticket) : r.single_node ? "local" : "none";
        call(out, "acquire", r.token, out.owned[0], queue_timeout_text_);
        out.arg(ttl_text());
        out.arg(r.wait ? "wait" : "once");
        if (fenced()) out.key(fence_key());
    }

    // {granted, holder's PTTL (0: free or no expiry), ticket, rank (-1: not queued)}, and
    // fenced, the grant's fence.
    acquire_answer read_acquire(const node_call&, boost::system::error_code ec,
                                std::span<const resp::value> replies) const override {
        const auto& v = script_reply(replies);
        if (ec) return script_failed(ec, v);
        if (!is_integer_array(v, fenced() ? 5 : 4)) return malformed(v);
        auto a = v.elements[0].integer == 1 ? granted_answer() : denied_answer();
        a.place = queue_place{v.elements[2].integer, v.elements[3].integer};
        if (a.verdict == vote::granted && fenced()) a.fence = v.elements[4].integer;
        if (a.verdict == vote::denied && v.elements[1].integer > 0) a.holder_pttl = v.elements[1].integer;
        return a;
    }

    // A node that granted took us out of its queue: put us back at our ticket.
    void round_cleanup(std::string_view token, std::uint64_t ticket, node_call& out) const override {
        out.owned[0] = std::to_string(ticket);
        call(out, ticket != 0 ? "requeue" : "withdraw", token, out.owned[0], queue_timeout_text_);
    }

    // Leaves the queue too, and hands the lock over to the next waiter.
    void release(std::string_view value, bool, node_call& out) const override {
        call(out, "release", value, "0", "0");
    }

    bool leave_queue(std::string_view value, node_call& out) const override {
        call(out, "dequeue", value, "0", "0");
        return true;
    }

private:
    void call(node_call& out, std::string_view op, std::string_view value, std::string_view ticket,
              std::string_view keep) const {
        out.script = &scripts::fair;
        out.key(keys().lock);
        out.key(queue_keys_.queue);
        out.key(queue_keys_.deadlines);
        out.key(queue_keys_.tickets);
        out.key(queue_keys_.handoffs);
        out.arg(op);
        out.arg(place_);
        out.arg(value);
        out.arg(queue_keys_.wake_prefix);
        out.arg(ticket);
        out.arg(keep);
    }

    fair_queue_keys queue_keys_;
    std::string place_;
    std::string wake_channel_;
    std::string queue_timeout_text_;
};

}  // namespace

std::shared_ptr<const lock_kind> make_fair_kind(resource_keys keys, const lock_options& options,
                                                std::string place) {
    return std::make_shared<fair_kind>(std::move(keys), options, std::move(place));
}

}  // namespace redlock::detail
