// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_OWNER_ID_HPP
#define REDLOCK_OWNER_ID_HPP

#include <redlock/export.hpp>

#include <string>
#include <utility>

namespace redlock {

/// Who holds a reentrant lock. Acquisitions with the same owner_id re-enter the lock instead of
/// waiting for it, whichever coroutine or thread makes them: ownership is what you pass along,
/// never a thread id. Make one per logical owner (a request, a job) with random() and hand it to
/// whoever acts for that owner.
class REDLOCK_API owner_id {
public:
    owner_id() = default;
    /// Any non-empty string of at most 256 bytes; unique among the owners that share a lock.
    explicit owner_id(std::string value) : value_(std::move(value)) {}

    /// 128 random bits from the OS CSPRNG, hex-encoded. Throws std::system_error if the OS has
    /// none to give.
    static owner_id random();

    [[nodiscard]] const std::string& str() const noexcept { return value_; }
    [[nodiscard]] bool empty() const noexcept { return value_.empty(); }
    friend bool operator==(const owner_id&, const owner_id&) = default;

private:
    std::string value_;
};

}  // namespace redlock

#endif
