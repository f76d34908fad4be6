// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_LOCK_LEASE_EXTEND_BATCHER_HPP
#define REDLOCK_LOCK_LEASE_EXTEND_BATCHER_HPP

#include <redlock/resp/value.hpp>

#include <boost/asio/steady_timer.hpp>
#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace redlock::detail {

class client_state;

/// Coalesces the extends of many leases bound for one node into one extend_batch.lua call, so
/// that a client renewing thousands of leases sends a few script calls per node, not one per
/// lease. Extends queued within `window` of each other leave together, at most `max_batch` per
/// call; a lone extend goes out as the plain extend.lua. Each lease still gets its own reply
/// (1 extended, 0 not ours), so callers cannot tell a batched extend from a single one. A
/// cluster node's batches hold the keys of one slot each; a batch refused with TRYAGAIN (its
/// slot is being migrated and holds some of its keys) goes again as single extends.
/// Strand only.
class extend_batcher {
public:
    using reply_fn = std::function<void(boost::system::error_code, resp::value)>;
    static constexpr std::size_t max_batch = 500;
    static constexpr std::chrono::milliseconds window{2};

    extend_batcher(client_state& client, std::size_t nodes);

    /// The extend.lua call of the lease whose token `token` holds `key` on node `node`, to
    /// be sent alone or in a batch.
    void add(std::size_t node, std::string key, std::string token, std::string ttl_text,
             std::chrono::milliseconds timeout, reply_fn on_reply);

    /// Forgets the queued extends without a reply (their context shut down). Never throws.
    void drop_all() noexcept;

private:
    struct entry {
        std::string key;
        std::string token;
        std::string ttl_text;
        std::chrono::milliseconds timeout;
        reply_fn on_reply;
    };

    void flush();
    void send(std::size_t node, std::span<entry> batch);
    void send_batch(std::size_t node, std::span<entry> batch);
    /// Sends each extend of `batch`, which `tryagain` refused, alone, within what is left of
    /// its timeout since `sent_at`.
    void split(std::size_t node, std::vector<entry>& batch, std::chrono::steady_clock::time_point sent_at,
               const resp::value& tryagain);

    client_state& client_;
    std::vector<std::vector<entry>> queues_;
    boost::asio::steady_timer timer_;
    bool armed_ = false;
};

}  // namespace redlock::detail

#endif
