// SPDX-License-Identifier: BSL-1.0
#include "lock/acquire/quorum.hpp"

namespace redlock::detail {

std::chrono::steady_clock::duration drift_allowance(std::chrono::milliseconds ttl,
                                                    double drift_factor) noexcept {
    using namespace std::chrono;
    return duration_cast<steady_clock::duration>(duration<double, std::milli>(ttl.count() * drift_factor)) +
           milliseconds(2);
}

std::chrono::steady_clock::duration validity_left(std::chrono::milliseconds ttl,
                                                  std::chrono::steady_clock::duration elapsed,
                                                  double drift_factor) noexcept {
    return std::chrono::duration_cast<std::chrono::steady_clock::duration>(ttl) - elapsed -
           drift_allowance(ttl, drift_factor);
}

round_state vote_tally::add(vote v) noexcept {
    switch (v) {
        case vote::granted:
            ++granted_;
            break;
        case vote::denied:
            ++denied_;
            break;
        case vote::failed:
            ++failed_;
            break;
    }
    if (state_ != round_state::pending) return state_;
    const std::size_t may_fail = nodes_ - quorum_;
    if (granted_ >= quorum_) {
        state_ = round_state::won;
    } else if (failed_ > may_fail) {
        state_ = round_state::unreachable;
    } else if (denied_ + failed_ > may_fail) {
        state_ = round_state::denied;
    }
    return state_;
}

}  // namespace redlock::detail
