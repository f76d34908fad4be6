#ifndef REDLOCK_TOOLS_WAIT_STATUS_HPP
#define REDLOCK_TOOLS_WAIT_STATUS_HPP

#include <redlock/config.hpp>
#include <redlock/redis/connection.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace redlock::cli {

/// The line `redlock run` shows on a terminal while it waits, rewritten in place a few times a
/// second: how long it has waited, and how long the current holder's lease has left (the time
/// until fewer than a quorum of nodes still hold the key: the quorum-th largest PTTL).
class wait_status {
public:
    wait_status(const boost::asio::any_io_executor& ex, const client_config& cfg, std::string resource);
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

    std::vector<std::unique_ptr<redis::connection>> nodes_;
    std::string resource_;
    std::string key_;
    boost::asio::steady_timer timer_;
    std::chrono::steady_clock::time_point started_;
    std::vector<std::int64_t> pttls_;
    bool running_ = false;
    bool drawn_ = false;
};

}  // namespace redlock::cli

#endif
