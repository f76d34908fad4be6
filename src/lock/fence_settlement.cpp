#include "lock/fence_settlement.hpp"

#include <algorithm>

namespace redlock::detail {

void fence_settlement::reset(std::size_t nodes) {
    fences_.assign(nodes, 0);
    numbered_.assign(nodes, true);
    writing_back_ = false;
}

void fence_settlement::record(std::size_t node, std::int64_t fence, bool numbered) {
    fences_[node] = static_cast<std::uint64_t>(std::max<std::int64_t>(fence, 0));
    numbered_[node] = numbered;
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
    const bool reentered = outer != 0 || existing_holds(granted) >= quorum;
    fence_ = outer;
    for (std::size_t i = 0; i < granted.size() && outer == 0; ++i)
        if (granted[i] && (!reentered || !numbered_[i])) fence_ = std::max(fence_, fences_[i]);
    confirmed_ = 0;
    std::vector<std::size_t> behind;
    for (std::size_t i = 0; i < granted.size(); ++i) {
        if (!granted[i]) continue;
        if (fences_[i] == fence_) {
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

bool fence_settlement::behind(std::int64_t node_fence) const noexcept {
    return node_fence < 0 || static_cast<std::uint64_t>(node_fence) != fence_;
}

}  // namespace redlock::detail
