// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_TOOLS_WAIT_STATUS_HPP
#define REDLOCK_TOOLS_WAIT_STATUS_HPP

#include <redlock/config.hpp>
#include <redlock/event.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace redlock::redis::detail {
class node_link;
}

namespace redlock::cli {

/// The node quarantines a client announces (event_kind::node_quarantined), for the status line:
/// why a wait may last, said as soon as the client knows it rather than when the wait ends.
class quarantine_news {
public:
    using clock = std::chrono::steady_clock;
    /// `cfg` whose on_event also tells `news` (on the client's executor).
    [[nodiscard]] static client_config telling(client_config cfg,
                                               const std::shared_ptr<quarantine_news>& news);
    void on_event(const event& e, clock::time_point now);
    /// "node N: restart quarantine, votes in 57s" for the quarantine still running that ends
    /// first, with how many more run; empty if none does.
    [[nodiscard]] std::string text(clock::time_point now) const;

private:
    struct quarantine {
        std::string node;
        bool failover = false;
        clock::time_point until;
    };
    std::vector<quarantine> running_;
};

/// The line `redlock run` shows on a terminal while it waits, rewritten in place a few times a
/// second: how long it has waited, and how long the current holder's lease has left (the time
/// until fewer than a quorum of nodes still hold the key: the quorum-th largest PTTL). Each
/// node's PTTL is asked where the client would ask it (open_node_links): a cluster's master of
/// the key's slot, the master a Sentinel node's sentinels name. A node that does not answer
/// within a tick (not yet connected, a cluster's slot map not read yet) counts as no key.
class wait_status {
public:
    wait_status(const boost::asio::any_io_executor& ex, const client_config& cfg, std::string resource,
                std::shared_ptr<const quarantine_news> news);
    ~wait_status();
    wait_status(const wait_status&) = delete;
    wait_status& operator=(const wait_status&) = delete;
    void start();
    /// Erases the line; idempotent.
    void stop();

    /// The holder's time left from the nodes' PTTLs (-2: no key, -1: no expiry): the quorum-th
    /// largest; negative if fewer than a quorum hold the key, no_expiry if a quorum's keys have none.
    static std::int64_t quorum_time_left(std::vector<std::int64_t> pttls);
    static constexpr std::int64_t no_expiry = std::numeric_limits<std::int64_t>::max();

private:
    void tick();
    void draw();

    std::vector<std::unique_ptr<redis::detail::node_link>> nodes_;
    std::string resource_;
    std::string key_;
    boost::asio::steady_timer timer_;
    std::chrono::steady_clock::time_point started_;
    std::vector<std::int64_t> pttls_;
    std::shared_ptr<const quarantine_news> news_;
    bool running_ = false;
    bool drawn_ = false;
};

}  // namespace redlock::cli

#endif
