// SPDX-License-Identifier: BSL-1.0
#include "lock/acquire/fence_settlement.hpp"

#include <algorithm>

namespace redlock::detail {

void fence_settlement::reset(std::size_t nodes, std::size_t resources) {
    width_ = std::max<std::size_t>(resources, 1);
    fences_.assign(nodes * width_, 0);
    numbered_.assign(nodes, true);
    fence_.assign(width_, 0);
    writing_back_ = false;
}

void fence_settlement::record(std::size_t node, std::span<const std::int64_t> fences, bool numbered) {
    for (std::size_t r = 0; r < width_ && r < fences.size(); ++r)
        fences_[node * width_ + r] = static_cast<std::uint64_t>(std::max<std::int64_t>(fences[r], 0));
    numbered_[node] = numbered;
}

bool fence_settlement::node_has_fence(std::size_t node) const noexcept {
    return std::equal(fence_.begin(), fence_.end(),
                      fences_.begin() + static_cast<std::ptrdiff_t>(node * width_));
}

std::size_t fence_settlement::existing_holds(std::span<const bool> granted) const {
    std::size_t n = 0;
    for (std::size_t i = 0; i < granted.size() && i < numbered_.size(); ++i)
        if (granted[i] && !numbered_[i]) n += 1;
    return n;
}

std::vector<std::size_t> fence_settlement::settle(std::span<const bool> granted, std::uint64_t outer,
                                                  std::size_t quorum) {
    // A re-entry while this client holds the outer hold takes its fence, whatever the nodes
    // that answered show (some of the hold's quorum may be out of reach).
    // (Only a reentrant lock enters a hold, and it has one resource.)
    const bool reentered = outer != 0 || existing_holds(granted) >= quorum;
    fence_.assign(width_, 0);
    fence_.front() = outer;
    for (std::size_t i = 0; i < granted.size() && outer == 0; ++i)
        if (granted[i] && (!reentered || !numbered_[i]))
            for (std::size_t r = 0; r < width_; ++r)
                fence_[r] = std::max(fence_[r], fences_[i * width_ + r]);
    confirmed_ = 0;
    std::vector<std::size_t> behind;
    for (std::size_t i = 0; i < granted.size(); ++i) {
        if (!granted[i]) continue;
        if (node_has_fence(i)) {
            ++confirmed_;
        } else {
            behind.push_back(i);
        }
    }
    // Nodes behind are written back even when a quorum already has the fence: their counters
    // then order later grants sooner, and a reentrant hold's next re-entry there reports this
    // fence.
    writing_back_ = confirmed_ < quorum;
    pending_ = behind.size();
    return behind;
}

fence_settlement::writeback fence_settlement::on_writeback(bool raised, std::size_t quorum) {
    if (!writing_back_) return writeback::pending;
    --pending_;
    if (raised) ++confirmed_;
    if (confirmed_ >= quorum) {
        writing_back_ = false;
        return writeback::confirmed;
    }
    if (pending_ == 0) {
        writing_back_ = false;
        return writeback::short_of_quorum;
    }
    return writeback::pending;
}

bool fence_settlement::behind(std::span<const std::int64_t> node_fences) const noexcept {
    if (node_fences.size() != fence_.size()) return true;
    for (std::size_t r = 0; r < fence_.size(); ++r)
        if (node_fences[r] < 0 || static_cast<std::uint64_t>(node_fences[r]) != fence_[r]) return true;
    return false;
}

}  // namespace redlock::detail
