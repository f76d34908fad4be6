// SPDX-License-Identifier: BSL-1.0
// A plain lock: the key holds one acquisition's token. Unfenced, a round is a pipeline
// (SET NX PX GET, with PTTL and WAIT when asked); fenced, acquire_fenced.lua, which numbers
// the grant in the same step.
#include "lock/kinds/lock_kind.hpp"
#include "lock/kinds/script_answers.hpp"
#include "scripts/scripts_gen.hpp"
#include <redlock/error.hpp>

namespace redlock::detail {

namespace {

class plain_kind final : public lock_kind {
public:
    plain_kind(resource_keys keys, const lock_options& o)
        : lock_kind(std::move(keys), o), replicas_(o.replicas), replica_timeout_(o.replica_timeout) {}

    void acquire(const round_request& r, node_call& out) const override {
        if (fenced()) {
            out.script = &scripts::acquire_fenced;
            out.key(keys().lock);
            out.key(fence_key());
            out.arg(r.token);
            out.arg(ttl_text());
            if (!r.previous_token.empty()) out.arg(r.previous_token);
            return;
        }
        // GET makes the reply say who holds the key: nil when we just took it, the token of an
        // earlier round of ours when that round's cleanup has not arrived, else someone else's.
        out.key(keys().lock);
        out.pipeline.push("SET", keys().lock, r.token, "NX", "PX", ttl_text(), "GET");
        if (r.ask_holder_pttl) {
            out.pttl_reply = out.pipeline.size();
            out.pipeline.push("PTTL", keys().lock);
        }
        // Redisson's answer to a master with replicas: the grant counts once enough
        // replicas have it, so that a failover does not lose it.
        out.wait_for_replicas(replicas_, replica_timeout_);
    }

    acquire_answer read_acquire(const node_call& sent, boost::system::error_code ec,
                                std::span<const resp::value> replies) const override {
        if (fenced()) return read_fenced(ec, script_reply(replies));
        if (ec) {
            acquire_answer a;
            a.ec = ec;
            return a;
        }
        const auto& v = replies.front();
        if (v.is_null()) {
            auto a = granted_answer();
            if (sent.wait_reply != 0)
                a.replication = judge_replication(replies[sent.wait_reply], replicas_, replica_timeout_, "");
            return a;
        }
        if (v.is_error() && v.error_code() == "WRONGTYPE") return denied_answer();  // a reentrant lock's hash
        if (v.is_error()) {
            acquire_answer a;
            a.ec = error::server_error;
            a.detail = v.str;
            a.node_fault = true;
            return a;
        }
        if (v.kind != resp::type::bulk_string && v.kind != resp::type::simple_string) return malformed(v);
        auto a = denied_answer();
        a.held_by = v.str;
        if (sent.pttl_reply != 0 && replies[sent.pttl_reply].kind == resp::type::integer)
            a.holder_pttl = replies[sent.pttl_reply].integer;
        return a;
    }

    void round_cleanup(std::string_view token, std::uint64_t, node_call& out) const override {
        release_call(keys(), {}, token, false, out);
    }

    void release(std::string_view value, bool announce, node_call& out) const override {
        release_call(keys(), {}, value, announce, out);
    }

    bool take_over(std::string_view earlier, std::string_view token, node_call& out) const override {
        out.script = &scripts::takeover;
        out.key(keys().lock);
        out.arg(earlier);
        out.arg(token);
        out.arg(ttl_text());
        return true;
    }

private:
    // {1, fence}: granted; {0, holder's PTTL}: refused.
    static acquire_answer read_fenced(boost::system::error_code ec, const resp::value& v) {
        if (ec) return script_failed(ec, v);
        if (!is_integer_array(v, 2)) return malformed(v);
        if (v.elements[0].integer == 1) {
            auto a = granted_answer();
            a.fence = v.elements[1].integer;
            return a;
        }
        auto a = denied_answer();
        a.holder_pttl = v.elements[1].integer;
        return a;
    }

    int replicas_;
    std::chrono::milliseconds replica_timeout_;
};

}  // namespace

std::shared_ptr<const lock_kind> make_plain_kind(resource_keys keys, const lock_options& options) {
    return std::make_shared<plain_kind>(std::move(keys), options);
}

}  // namespace redlock::detail
