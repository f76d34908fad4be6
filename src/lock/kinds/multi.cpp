// A plain lock over several resources at once: one token in every resource's lock key, taken
// all or none by one script per node (multi_acquire.lua), extended, checked and released
// together. Over independent masters every node holds all the keys, so no order among the
// names is needed: a node never grants part of what an acquisition asks. Fenced, each resource
// keeps its own counter, and the grant carries a fence per resource.
#include "lock/kinds/lock_kind.hpp"
#include "lock/kinds/script_answers.hpp"
#include "scripts/scripts_gen.hpp"

namespace redlock::detail {

namespace {

class multi_kind final : public lock_kind {
public:
    multi_kind(std::vector<std::string> names, std::vector<resource_keys> keys, const lock_options& o)
        : lock_kind(keys.front(), o), names_(std::move(names)), resources_(std::move(keys)) {
        // The views point into resources_ and fence_keys_, which never change after this.
        for (const auto& k : resources_)
            locks_and_channels_.push_back(k.lock);
        for (const auto& k : resources_)
            locks_and_channels_.push_back(k.released);
        if (!fenced()) return;
        for (const auto& k : resources_)
            fence_keys_.push_back(fence_key_for(k));
        for (const auto& k : resources_)
            locks_and_fences_.push_back(k.lock);
        for (const auto& f : fence_keys_)
            locks_and_fences_.push_back(f);
    }

    [[nodiscard]] std::span<const std::string> resources() const noexcept override { return names_; }
    [[nodiscard]] const std::string& released_channel(std::size_t i) const noexcept override {
        return resources_[i < resources_.size() ? i : 0].released;
    }

    void acquire(const round_request& r, node_call& out) const override {
        out.script = &scripts::multi_acquire;
        out.key_list = fenced() ? std::span<const std::string_view>(locks_and_fences_) : lock_keys();
        out.arg(r.token);
        out.arg(ttl_text());
        out.arg(fenced() ? "fenced" : "plain");
        if (!r.previous_token.empty()) out.arg(r.previous_token);
    }

    // {1, 0}: granted; fenced {1, f1, ..., fn}; {0, pttl, i}: the i-th key (from 1) is held by
    // another.
    acquire_answer read_acquire(const node_call&, boost::system::error_code ec,
                                std::span<const resp::value> replies) const override {
        const auto& v = script_reply(replies);
        if (ec) return script_failed(ec, v);
        if (!fenced() && is_integer_array(v, 2) && v.elements[0].integer == 1) return granted_answer();
        if (fenced() && is_integer_array(v, resources_.size() + 1) && v.elements[0].integer == 1) {
            auto a = granted_answer();
            for (std::size_t i = 1; i < v.elements.size(); ++i)
                a.fences.push_back(v.elements[i].integer);
            a.fence = a.fences.front();
            return a;
        }
        if (!is_integer_array(v, 3) || v.elements[0].integer != 0 || v.elements[2].integer < 1 ||
            static_cast<std::size_t>(v.elements[2].integer) > resources_.size())
            return malformed(v);
        auto a = denied_answer();
        a.holder_pttl = v.elements[1].integer;
        a.blocked_by = static_cast<std::size_t>(v.elements[2].integer - 1);
        return a;
    }

    void round_cleanup(std::string_view token, std::uint64_t, node_call& out) const override {
        release(token, false, out);
    }

    void release(std::string_view value, bool announce, node_call& out) const override {
        out.script = &scripts::multi_release;
        out.key_list = locks_and_channels_;
        out.arg(value);
        if (!announce) out.arg("quiet");
    }

    void extend(std::string_view token, std::chrono::milliseconds ttl, node_call& out) const override {
        out.script = &scripts::multi_extend;
        out.owned[0] = std::to_string(ttl.count());
        out.key_list = lock_keys();
        out.arg(token);
        out.arg(out.owned[0]);
    }
    [[nodiscard]] bool extends_in_batches() const noexcept override { return false; }

    void write_back_fence(std::string_view token, std::span<const std::uint64_t> fences,
                          node_call& out) const override {
        out.script = &scripts::multi_fence_writeback;
        out.key_list = locks_and_fences_;
        out.owned[0].clear();
        for (auto f : fences) {
            if (!out.owned[0].empty()) out.owned[0] += ' ';
            out.owned[0] += std::to_string(f);
        }
        out.arg(token);
        out.arg(out.owned[0]);
    }

    void check(std::string_view token, node_call& out) const override {
        out.script = &scripts::multi_check;
        out.key_list = lock_keys();
        out.arg(token);
    }

private:
    [[nodiscard]] std::span<const std::string_view> lock_keys() const {
        return std::span<const std::string_view>(locks_and_channels_).first(resources_.size());
    }

    std::vector<std::string> names_;
    std::vector<resource_keys> resources_;
    std::vector<std::string> fence_keys_;               // fenced: each resource's counter
    std::vector<std::string_view> locks_and_channels_;  // every lock key, then every channel
    std::vector<std::string_view> locks_and_fences_;    // fenced: every lock key, then every counter
};

}  // namespace

std::shared_ptr<const lock_kind> make_multi_kind(std::string_view prefix, std::vector<std::string> resources,
                                                 const lock_options& options) {
    std::vector<resource_keys> keys;
    keys.reserve(resources.size());
    for (const auto& r : resources)
        keys.push_back(keys_for(prefix, r));
    return std::make_shared<multi_kind>(std::move(resources), std::move(keys), options);
}

}  // namespace redlock::detail
