// SPDX-License-Identifier: BSL-1.0
#include "lock/nodes/slot_steps.hpp"

#include <algorithm>

namespace redlock::detail {

namespace {

resp::value integer(std::int64_t i) {
    resp::value v;
    v.kind = resp::type::integer;
    v.integer = i;
    return v;
}

resp::value integers(const std::vector<std::int64_t>& all) {
    resp::value v;
    v.kind = resp::type::array;
    for (auto i : all)
        v.elements.push_back(integer(i));
    return v;
}

bool is_integer(const resp::value& v, std::int64_t i) {
    return v.kind == resp::type::integer && v.integer == i;
}

bool all_integers(const resp::value& v) {
    return v.kind == resp::type::array &&
           std::all_of(v.elements.begin(), v.elements.end(),
                       [](const resp::value& e) { return e.kind == resp::type::integer; });
}

}  // namespace

bool is_step_grant(const resp::value& reply) {
    return all_integers(reply) && !reply.elements.empty() && reply.elements[0].integer == 1;
}

step_fold::step_fold(step_merge merge, std::vector<std::vector<std::size_t>> members)
    : merge_(merge), members_(std::move(members)) {
    if (merge_ != step_merge::acquire_fenced) return;
    std::size_t resources = 0;
    for (const auto& m : members_)
        resources += m.size();
    fences_.assign(resources, 0);
}

bool step_fold::add(std::size_t step, boost::system::error_code ec, const resp::value& reply) {
    const bool last_step = step + 1 >= members_.size();
    if (merge_ == step_merge::acquire_plain || merge_ == step_merge::acquire_fenced) {
        if (ec) {
            // A step that timed out may still have granted: undone too (the release checks the token).
            ec_ = ec;
            last_ = reply;
            ended_early_ = true;
            undo_ = step + 1;
            return false;
        }
        return add_acquire(step, reply) && !last_step;
    }
    if (merge_ == step_merge::release) {
        // Every step runs: a resource left held would block others until its ttl.
        if (ec && !ec_) {
            ec_ = ec;
            last_ = reply;
        }
        if (!is_integer(reply, 1)) all_ones_ = false;
        return !last_step;
    }
    if (ec) {
        ec_ = ec;
        last_ = reply;
        ended_early_ = true;
        return false;
    }
    if (merge_ == step_merge::all_ones) {
        if (is_integer(reply, 1)) return !last_step;
        last_ = reply;
        ended_early_ = true;
        return false;
    }
    // shortest_hold
    if (reply.kind != resp::type::integer || reply.integer == 0 || reply.integer < -1) {
        last_ = reply;
        ended_early_ = true;
        return false;
    }
    if (reply.integer > 0 && (shortest_ == -1 || reply.integer < shortest_)) shortest_ = reply.integer;
    return !last_step;
}

bool step_fold::add_acquire(std::size_t step, const resp::value& reply) {
    const auto& members = members_[step];
    const bool granted = is_step_grant(reply);
    if (granted && merge_ == step_merge::acquire_plain && reply.elements.size() == 2) return true;
    if (granted && merge_ == step_merge::acquire_fenced && reply.elements.size() == members.size() + 1) {
        for (std::size_t i = 0; i < members.size(); ++i)
            fences_[members[i]] = reply.elements[i + 1].integer;
        return true;
    }
    ended_early_ = true;
    const auto held = all_integers(reply) && reply.elements.size() == 3 && reply.elements[0].integer == 0
                          ? reply.elements[2].integer
                          : 0;
    if (held >= 1 && static_cast<std::size_t>(held) <= members.size()) {
        // Refused, having written nothing: the resource that is held, numbered in the whole call.
        last_ = integers({0, reply.elements[1].integer, static_cast<std::int64_t>(members[held - 1]) + 1});
        undo_ = step;
        return false;
    }
    // A reply in no shape the script gives: passed on, for the kind to call malformed.
    last_ = reply;
    undo_ = step + 1;
    return false;
}

resp::value step_fold::reply() const {
    if (ended_early_ || ec_) return last_;
    switch (merge_) {
        case step_merge::acquire_plain:
            return integers({1, 0});
        case step_merge::acquire_fenced: {
            std::vector<std::int64_t> all{1};
            all.insert(all.end(), fences_.begin(), fences_.end());
            return integers(all);
        }
        case step_merge::release:
            return integer(all_ones_ ? 1 : 0);
        case step_merge::all_ones:
            return integer(1);
        case step_merge::shortest_hold:
            return integer(shortest_);
    }
    return {};
}

}  // namespace redlock::detail
