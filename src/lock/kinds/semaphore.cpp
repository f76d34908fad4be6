// SPDX-License-Identifier: BSL-1.0
// A semaphore with expiring permits (lock_options::permits = K): at most K acquisitions hold
// the resource at once, each a lease on one permit. The lock key is a sorted set of the
// holders' tokens scored by their expiry in server time (semaphore_acquire.lua), so a dead
// holder's permit comes back after its ttl; the count K is a member of it too, so that callers
// who disagree on it are told (error::permits_mismatch) instead of mixing two limits.
#include "lock/kinds/kind_keys.hpp"
#include "lock/kinds/lock_kind.hpp"
#include "lock/kinds/script_answers.hpp"
#include "scripts/scripts_gen.hpp"
#include <redlock/error.hpp>

namespace redlock::detail {

namespace {

class semaphore_kind final : public lock_kind {
public:
    semaphore_kind(resource_keys keys, const lock_options& o)
        : lock_kind(std::move(keys), o),
          read_write_modes_(read_write_keys_for(this->keys()).modes),
          permits_(o.permits),
          permits_text_(std::to_string(o.permits)) {}

    [[nodiscard]] int permits() const noexcept override { return permits_; }

    void acquire(const round_request& r, node_call& out) const override {
        out.script = &scripts::semaphore_acquire;
        out.key(keys().lock);
        out.key(read_write_modes_);
        out.arg(r.token);
        out.arg(ttl_text());
        out.arg(permits_text_);
        if (!r.previous_token.empty()) out.arg(r.previous_token);
    }

    // {1, 0}: granted; {0, ms until a permit frees}: all taken; {-1, k}: in use with k permits.
    acquire_answer read_acquire(const node_call&, boost::system::error_code ec,
                                std::span<const resp::value> replies) const override {
        const auto& v = script_reply(replies);
        if (ec) return script_failed(ec, v);
        if (!is_integer_array(v, 2)) return malformed(v);
        const auto verdict = v.elements[0].integer;
        if (verdict == 1) return granted_answer();
        if (verdict == -1) {
            acquire_answer a;
            a.ec = error::permits_mismatch;
            a.detail = "its permits are in use with permits = " + std::to_string(v.elements[1].integer) +
                       ", this acquire asks for " + permits_text_;
            return a;
        }
        if (verdict != 0) return malformed(v);
        auto a = denied_answer();
        a.holder_pttl = v.elements[1].integer;
        return a;
    }

    void round_cleanup(std::string_view token, std::uint64_t, node_call& out) const override {
        release(token, false, out);
    }

    void release(std::string_view value, bool announce, node_call& out) const override {
        out.script = &scripts::semaphore_release;
        out.key(keys().lock);
        out.key(keys().released);
        out.arg(value);
        if (!announce) out.arg("quiet");
    }

    void extend(std::string_view token, std::chrono::milliseconds ttl, node_call& out) const override {
        out.script = &scripts::semaphore_extend;
        out.owned[0] = std::to_string(ttl.count());
        out.key(keys().lock);
        out.arg(token);
        out.arg(out.owned[0]);
    }
    void hand_over(const hand_over_step& step, node_call& out) const override {
        out.key(keys().lock);
        hand_over_call("permit", step, out);
    }

    [[nodiscard]] bool extends_in_batches() const noexcept override { return false; }

private:
    std::string read_write_modes_;
    int permits_;
    std::string permits_text_;
};

}  // namespace

std::shared_ptr<const lock_kind> make_semaphore_kind(resource_keys keys, const lock_options& options) {
    return std::make_shared<semaphore_kind>(std::move(keys), options);
}

}  // namespace redlock::detail
