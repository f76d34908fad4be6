// SPDX-License-Identifier: BSL-1.0
// A read-write lock (lock_options::mode read or write): readers share the resource, a writer
// holds it alone. The lock key is a sorted set of the holds' tokens scored by their expiry in
// server time, as a semaphore's permits are (a dead reader holds writers off for its ttl at
// most); a hash beside it says each hold's mode, fence and owner (rw_acquire.lua). A writer
// that waits marks the resource so that new readers wait behind it.
#include "lock/kinds/kind_keys.hpp"
#include "lock/kinds/lock_kind.hpp"
#include "lock/kinds/script_answers.hpp"
#include "scripts/scripts_gen.hpp"
#include <redlock/error.hpp>

namespace redlock::detail {

namespace {

class read_write_kind final : public lock_kind {
public:
    read_write_kind(resource_keys keys, const lock_options& o)
        : lock_kind(std::move(keys), o),
          rw_keys_(read_write_keys_for(this->keys())),
          fence_counter_(fence_key_for(this->keys())),
          mode_(o.mode),
          owner_(o.reentrant ? o.owner.str() : std::string()),
          queue_timeout_(o.queue_timeout),
          mark_text_(std::to_string(o.queue_timeout.count())) {}

    [[nodiscard]] std::string_view owner() const noexcept override { return owner_; }
    [[nodiscard]] lock_mode mode() const noexcept override { return mode_; }
    // A waiting writer's mark holds new readers off until its next round; it lapses
    // queue_timeout after the round that wrote it.
    [[nodiscard]] between_rounds kept_between_rounds() const noexcept override {
        between_rounds kept;
        if (mode_ != lock_mode::write) return kept;
        kept.leaves_trace = true;
        kept.lapses_after = queue_timeout_;
        return kept;
    }

    void acquire(const round_request& r, node_call& out) const override {
        out.script = &scripts::rw_acquire;
        out.key(keys().lock);
        out.key(rw_keys_.modes);
        out.key(rw_keys_.waiting);
        out.key(fence_counter_);  // named even unfenced: a script's keys are its cluster slot's
        out.arg(r.token);
        out.arg(ttl_text());
        out.arg(mode_ == lock_mode::write ? "w" : "r");
        out.arg(owner_);
        out.arg(r.wait && mode_ == lock_mode::write ? std::string_view(mark_text_) : std::string_view("0"));
        out.arg(fenced() ? "1" : "0");
        if (!r.previous_token.empty()) out.arg(r.previous_token);
    }

    // {1, fence}: granted; {0, ms until the first hold or mark in the way lapses}: refused;
    // {-1, 0}: the owner only reads and asked to write.
    acquire_answer read_acquire(const node_call&, boost::system::error_code ec,
                                std::span<const resp::value> replies) const override {
        const auto& v = script_reply(replies);
        if (ec) return script_failed(ec, v);
        if (!is_integer_array(v, 2)) return malformed(v);
        const auto verdict = v.elements[0].integer;
        if (verdict == 1) {
            auto a = granted_answer();
            if (fenced()) {
                if (v.elements[1].integer <= 0) return malformed(v);
                a.fence = v.elements[1].integer;
            }
            return a;
        }
        if (verdict == -1 && mode_ == lock_mode::write && !owner_.empty()) {
            acquire_answer a;
            a.ec = error::upgrade_refused;
            a.detail = "owner \"" + owner_ +
                       "\" holds it for reading and asked to write: release the read lease first";
            return a;
        }
        if (verdict != 0) return malformed(v);
        auto a = denied_answer();
        a.holder_pttl = v.elements[1].integer;
        return a;
    }

    // The waiting writer's mark stays for its next round, which moves it to its new token.
    void round_cleanup(std::string_view token, std::uint64_t, node_call& out) const override {
        release_call(token, "quiet", out);
    }

    void release(std::string_view value, bool announce, node_call& out) const override {
        release_call(value, announce ? std::string_view() : std::string_view("leave"), out);
    }

    // A won round's mark on the nodes that refused it.
    bool leave_queue(std::string_view value, node_call& out) const override {
        release_call(value, "unmark", out);
        return true;
    }

    void extend(std::string_view token, std::chrono::milliseconds ttl, node_call& out) const override {
        out.script = &scripts::rw_extend;
        out.owned[0] = std::to_string(ttl.count());
        out.key(keys().lock);
        out.key(rw_keys_.modes);
        out.arg(token);
        out.arg(out.owned[0]);
    }
    void hand_over(const hand_over_step& step, node_call& out) const override {
        out.key(keys().lock);
        out.key(rw_keys_.modes);
        hand_over_call("rw", step, out);
        out.arg(step.from_owner);
        out.arg(step.to_owner);
    }

    [[nodiscard]] bool extends_in_batches() const noexcept override { return false; }

private:
    void release_call(std::string_view token, std::string_view how, node_call& out) const {
        out.script = &scripts::rw_release;
        out.key(keys().lock);
        out.key(rw_keys_.modes);
        out.key(rw_keys_.waiting);
        out.key(keys().released);
        out.arg(token);
        if (!how.empty()) out.arg(how);
    }

    read_write_keys rw_keys_;
    std::string fence_counter_;
    lock_mode mode_;
    std::string owner_;
    std::chrono::milliseconds queue_timeout_;
    std::string mark_text_;
};

}  // namespace

std::shared_ptr<const lock_kind> make_read_write_kind(resource_keys keys, const lock_options& options) {
    return std::make_shared<read_write_kind>(std::move(keys), options);
}

}  // namespace redlock::detail
