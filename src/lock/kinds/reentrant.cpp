// SPDX-License-Identifier: BSL-1.0
// A reentrant lock: a hash of the owner's acquisitions (acquire_reentrant.lua). The owner's
// acquisitions enter while it holds the lock; fenced, a re-entry keeps the hold's fence.
#include "lock/kinds/lock_kind.hpp"
#include "lock/kinds/script_answers.hpp"
#include "scripts/scripts_gen.hpp"

namespace redlock::detail {

namespace {

class reentrant_kind final : public lock_kind {
public:
    reentrant_kind(resource_keys keys, const lock_options& o)
        : lock_kind(std::move(keys), o), owner_(o.owner.str()) {}

    [[nodiscard]] std::string_view owner() const noexcept override { return owner_; }
    [[nodiscard]] bool reenters_fenced() const noexcept override { return fenced(); }

    void acquire(const round_request& r, node_call& out) const override {
        out.script = &scripts::acquire_reentrant;
        out.key(keys().lock);
        if (fenced()) out.key(fence_key());
        out.arg(owner_);
        out.arg(r.token);
        out.arg(ttl_text());
        if (!r.previous_token.empty()) out.arg(r.previous_token);
    }

    // n >= 1: held by our owner, n deep; -p: another owner or a plain lock holds it for p ms
    // more; 0: held with no expiry. Fenced: {n, the hold's fence, 1 if numbered by this call}.
    acquire_answer read_acquire(const node_call&, boost::system::error_code ec,
                                std::span<const resp::value> replies) const override {
        const auto& v = script_reply(replies);
        if (ec) return script_failed(ec, v);
        if (fenced() ? !is_integer_array(v, 3) : v.kind != resp::type::integer) return malformed(v);
        const auto depth = fenced() ? v.elements[0].integer : v.integer;
        if (depth >= 1) {
            auto a = granted_answer();
            if (fenced()) {
                a.fence = v.elements[1].integer;
                a.numbered = v.elements[2].integer == 1;
            }
            return a;
        }
        auto a = denied_answer();
        if (depth < 0) a.holder_pttl = -depth;
        return a;
    }

    void round_cleanup(std::string_view token, std::uint64_t, node_call& out) const override {
        release_call(keys(), owner_, token, false, out);
    }

    void release(std::string_view value, bool announce, node_call& out) const override {
        release_call(keys(), owner_, value, announce, out);
    }

    void extend(std::string_view token, std::chrono::milliseconds ttl, node_call& out) const override {
        out.script = &scripts::extend_reentrant;
        out.owned[0] = std::to_string(ttl.count());
        out.key(keys().lock);
        out.arg(owner_);
        out.arg(token);
        out.arg(out.owned[0]);
    }
    void hand_over(const hand_over_step& step, node_call& out) const override {
        out.key(keys().lock);
        hand_over_call("reentrant", step, out);
        out.arg(step.from_owner);
        out.arg(step.to_owner);
    }

    [[nodiscard]] bool extends_in_batches() const noexcept override { return false; }

private:
    std::string owner_;
};

}  // namespace

std::shared_ptr<const lock_kind> make_reentrant_kind(resource_keys keys, const lock_options& options) {
    return std::make_shared<reentrant_kind>(std::move(keys), options);
}

}  // namespace redlock::detail
