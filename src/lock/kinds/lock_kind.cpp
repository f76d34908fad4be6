// SPDX-License-Identifier: BSL-1.0
#include "lock/kinds/lock_kind.hpp"

#include "scripts/scripts_gen.hpp"

namespace redlock::detail {

lock_kind::lock_kind(resource_keys keys, const lock_options& options)
    : keys_(std::move(keys)),
      fence_key_(options.fenced ? fence_key_for(keys_) : std::string()),
      ttl_text_(std::to_string(options.ttl.count())) {}

void lock_kind::extend(std::string_view token, std::chrono::milliseconds ttl, node_call& out) const {
    out.script = &scripts::extend;
    out.owned[0] = std::to_string(ttl.count());
    out.key(keys_.lock);
    out.arg(token);
    out.arg(out.owned[0]);
}

void lock_kind::check(std::string_view token, node_call& out) const {
    out.script = &scripts::check;
    out.key(keys_.lock);
    out.arg(token);
}

void hand_over_call(std::string_view shape, const hand_over_step& step, node_call& out) {
    out.script = &scripts::handover;
    out.owned[0] = std::to_string(step.ttl.count());
    out.arg(shape);
    out.arg(step.from);
    out.arg(step.to);
    out.arg(out.owned[0]);
}

void lock_kind::hand_over(const hand_over_step& step, node_call& out) const {
    out.key(keys_.lock);
    hand_over_call("string", step, out);
}

void lock_kind::write_back_fence(std::string_view token, std::span<const std::uint64_t> fences,
                                 node_call& out) const {
    out.script = &scripts::fence_writeback;
    out.owned[0] = std::to_string(fences.empty() ? 0 : fences.front());
    out.key(keys_.lock);
    out.key(fence_key_);
    out.arg(token);
    out.arg(out.owned[0]);
    if (!owner().empty()) out.arg(owner());
}

std::shared_ptr<const lock_kind> make_lock_kind(resource_keys keys, const lock_options& options,
                                                std::string place) {
    if (options.fair) return make_fair_kind(std::move(keys), options, std::move(place));
    if (options.permits > 0) return make_semaphore_kind(std::move(keys), options);
    if (options.mode != lock_mode::exclusive) return make_read_write_kind(std::move(keys), options);
    if (options.reentrant) return make_reentrant_kind(std::move(keys), options);
    return make_plain_kind(std::move(keys), options);
}

}  // namespace redlock::detail
