// SPDX-License-Identifier: BSL-1.0
// A plain lock over several resources at once: one token in every resource's lock key, taken
// all or none by one script per node (multi_acquire.lua), extended, checked and released
// together. Over independent masters every node holds all the keys, so no order among the
// names is needed: a node never grants part of what an acquisition asks. On a Redis Cluster
// the keys lie on several slots, which no one script may touch: there each call also comes
// split into one step per slot, in the order of the slots (slot_steps.hpp). Fenced, each
// resource keeps its own counter, and the grant carries a fence per resource.
#include "lock/kinds/lock_kind.hpp"
#include "lock/kinds/script_answers.hpp"
#include "redis/cluster_slot.hpp"
#include "scripts/scripts_gen.hpp"

#include <map>

namespace redlock::detail {

namespace {

class multi_kind final : public lock_kind {
public:
    multi_kind(std::vector<std::string> names, std::vector<resource_keys> keys, const lock_options& o,
               bool split_by_slot)
        : lock_kind(keys.front(), o), names_(std::move(names)), resources_(std::move(keys)) {
        if (fenced())
            for (const auto& k : resources_)
                fence_keys_.push_back(fence_key_for(k));
        std::vector<std::size_t> all(resources_.size());
        for (std::size_t i = 0; i < all.size(); ++i)
            all[i] = i;
        whole_ = lists_for(all);
        if (!split_by_slot) return;
        std::map<std::uint16_t, std::vector<std::size_t>> by_slot;
        for (std::size_t i = 0; i < resources_.size(); ++i)
            by_slot[redis::detail::key_slot(resources_[i].lock)].push_back(i);
        if (by_slot.size() < 2) return;
        for (auto& [slot, members] : by_slot) {
            groups_.push_back(lists_for(members));
            members_.push_back(std::move(members));
        }
    }

    [[nodiscard]] std::span<const std::string_view> lock_keys() const noexcept override {
        return whole_.locks();
    }

    [[nodiscard]] std::span<const std::string> resources() const noexcept override { return names_; }
    [[nodiscard]] const std::string& released_channel(std::size_t i) const noexcept override {
        return resources_[i < resources_.size() ? i : 0].released;
    }

    void acquire(const round_request& r, node_call& out) const override {
        acquire_of(whole_, r, out);
        split(out, fenced() ? step_merge::acquire_fenced : step_merge::acquire_plain,
              [&](const key_lists& group, node_call& step) { acquire_of(group, r, step); });
        // Announced: a waiter that one of these slots refused while we held it is woken, where
        // a quiet undo would leave it asleep until the ttl it was told, the resource free.
        for (const auto& group : groups_)
            release_of(group, r.token, true, out.undo_step());
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
        release_of(whole_, value, announce, out);
        split(out, step_merge::release,
              [&](const key_lists& group, node_call& step) { release_of(group, value, announce, step); });
    }

    void extend(std::string_view token, std::chrono::milliseconds ttl, node_call& out) const override {
        const auto extend_of = [&](const key_lists& keys, node_call& call) {
            call.script = &scripts::multi_extend;
            call.owned[0] = std::to_string(ttl.count());
            call.key_list = keys.locks();
            call.arg(token);
            call.arg(call.owned[0]);
        };
        extend_of(whole_, out);
        split(out, step_merge::all_ones, extend_of);
    }
    [[nodiscard]] bool extends_in_batches() const noexcept override { return false; }

    void hand_over(const hand_over_step& step, node_call& out) const override {
        const auto hand_over_of = [&](const key_lists& keys, node_call& call) {
            call.key_list = keys.locks();
            hand_over_call("string", step, call);
        };
        hand_over_of(whole_, out);
        split(out, step_merge::all_ones, hand_over_of);
    }

    void write_back_fence(std::string_view token, std::span<const std::uint64_t> fences,
                          node_call& out) const override {
        const auto write_back_of = [&](const key_lists& keys, node_call& call) {
            call.script = &scripts::multi_fence_writeback;
            call.key_list = keys.locks_and_fences;
            call.owned[0].clear();
            for (auto i : keys.members) {
                if (i >= fences.size()) break;
                if (!call.owned[0].empty()) call.owned[0] += ' ';
                call.owned[0] += std::to_string(fences[i]);
            }
            call.arg(token);
            call.arg(call.owned[0]);
        };
        write_back_of(whole_, out);
        split(out, step_merge::all_ones, write_back_of);
    }

    void check(std::string_view token, node_call& out) const override {
        const auto check_of = [&](const key_lists& keys, node_call& call) {
            call.script = &scripts::multi_check;
            call.key_list = keys.locks();
            call.arg(token);
        };
        check_of(whole_, out);
        split(out, step_merge::shortest_hold, check_of);
    }

private:
    // The keys the scripts take for some of the resources (all of them, or one slot's). Their
    // views point into resources_ and fence_keys_, which never change after the constructor.
    struct key_lists {
        std::vector<std::size_t> members;                  // indexes into resources_
        std::vector<std::string_view> locks_and_channels;  // every lock key, then every channel
        std::vector<std::string_view> locks_and_fences;    // fenced: every lock key, then every counter

        [[nodiscard]] std::span<const std::string_view> locks() const {
            return std::span<const std::string_view>(locks_and_channels).first(members.size());
        }
    };

    [[nodiscard]] key_lists lists_for(const std::vector<std::size_t>& members) const {
        key_lists k;
        k.members = members;
        for (auto i : members)
            k.locks_and_channels.push_back(resources_[i].lock);
        for (auto i : members)
            k.locks_and_channels.push_back(resources_[i].released);
        if (!fenced()) return k;
        for (auto i : members)
            k.locks_and_fences.push_back(resources_[i].lock);
        for (auto i : members)
            k.locks_and_fences.push_back(fence_keys_[i]);
        return k;
    }

    void acquire_of(const key_lists& keys, const round_request& r, node_call& call) const {
        call.script = &scripts::multi_acquire;
        call.key_list = fenced() ? std::span<const std::string_view>(keys.locks_and_fences) : keys.locks();
        call.arg(r.token);
        call.arg(ttl_text());
        call.arg(fenced() ? "fenced" : "plain");
        if (!r.previous_token.empty()) call.arg(r.previous_token);
    }

    static void release_of(const key_lists& keys, std::string_view value, bool announce, node_call& call) {
        call.script = &scripts::multi_release;
        call.key_list = keys.locks_and_channels;
        call.arg(value);
        if (!announce) call.arg("quiet");
    }

    // Adds to `out` its steps, one per slot, each built by `build`, when the kind splits.
    template <class Build>
    void split(node_call& out, step_merge merge, Build build) const {
        if (groups_.empty()) return;
        out.merge = merge;
        out.step_members = members_;
        for (const auto& group : groups_)
            build(group, out.step());
    }

    std::vector<std::string> names_;
    std::vector<resource_keys> resources_;
    std::vector<std::string> fence_keys_;  // fenced: each resource's counter
    key_lists whole_;
    // Split by slot (a Redis Cluster; empty otherwise): each slot's resources, in slot order.
    std::vector<key_lists> groups_;
    std::vector<std::vector<std::size_t>> members_;
};

}  // namespace

std::shared_ptr<const lock_kind> make_multi_kind(std::string_view prefix, std::vector<std::string> resources,
                                                 const lock_options& options, bool split_by_slot) {
    std::vector<resource_keys> keys;
    keys.reserve(resources.size());
    for (const auto& r : resources)
        keys.push_back(keys_for(prefix, r));
    return std::make_shared<multi_kind>(std::move(resources), std::move(keys), options, split_by_slot);
}

}  // namespace redlock::detail
