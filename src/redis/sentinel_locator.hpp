// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_REDIS_SENTINEL_LOCATOR_HPP
#define REDLOCK_REDIS_SENTINEL_LOCATOR_HPP

#include "redis/address_map.hpp"
#include "redis/serial_executor.hpp"
#include <redlock/redis/connection.hpp>
#include <redlock/redis/node_address.hpp>
#include <redlock/resp/value.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::redis::detail {

/// The master's address in a reply to SENTINEL GET-MASTER-ADDR-BY-NAME: `like` (its
/// credentials, database and transport) with the host and port the sentinel named. Null
/// reply (the sentinel knows no such master), an error or a malformed one: nullopt, and `why`
/// says which.
std::optional<node_address> read_master_addr(const resp::value& reply, const node_address& like,
                                             std::string& why);

/// The new master a `+switch-master` message announces for `master_name` ("<name> <old-ip>
/// <old-port> <new-ip> <new-port>"), as `like` with that host and port; nullopt if `push` is
/// no such message, or is about another master.
std::optional<node_address> read_switch_master(const resp::value& push, std::string_view master_name,
                                               const node_address& like);

/// The master of one Sentinel-watched deployment, for the connections that lead to it: their
/// connection_config::locate asks here before each attempt. A locate asks every sentinel at
/// once (SENTINEL GET-MASTER-ADDR-BY-NAME) and takes the master a majority of them name, or,
/// once every sentinel answered or timed out, the one named most; a sentinel that is down,
/// does not answer in time, or knows no such master is passed over.
/// Whether the named server is still a master is the connection's own check
/// (connection_config::require_master).
///
/// Each sentinel's connection is subscribed to `+switch-master`: a failover the sentinels
/// announce reaches the on_switch() functions at once (with the new master), instead of after the old
/// master's connection times out.
///
/// Strand only, except locate(), which may be called from any thread.
class sentinel_locator final : public std::enable_shared_from_this<sentinel_locator> {
public:
    using strand_type = serial_executor;
    using switch_fn = std::function<void(const node_address&)>;

    /// `sentinels`: their addresses (with the credentials to log in to them); `master_like`:
    /// the credentials, database and transport of the master; `sentinel_config`: the
    /// configuration of each sentinel's connection, its address set here.
    /// `remap`: applied to the master address the sentinels name.
    sentinel_locator(strand_type strand, std::vector<node_address> sentinels, std::string master_name,
                     node_address master_like, connection_config sentinel_config, address_map remap = {});
    ~sentinel_locator();
    sentinel_locator(const sentinel_locator&) = delete;
    sentinel_locator& operator=(const sentinel_locator&) = delete;

    /// Connects to the sentinels and subscribes to +switch-master.
    void start();
    /// `f` is told of every master, announced or located, that differs from the one known
    /// before (not the first): the voter's connection and its subscriber connections move.
    void on_switch(switch_fn f) { on_switch_.push_back(std::move(f)); }
    void close();

    /// Completes with the master's address, or master_not_found and what each sentinel said,
    /// within `budget`. The handler runs on its associated executor (by default the strand).
    void locate(std::chrono::milliseconds budget, connection_config::locate_handler handler);
    /// A connection_config::locate that asks this locator while it lives.
    [[nodiscard]] std::function<void(std::chrono::milliseconds, connection_config::locate_handler)> hook();

    [[nodiscard]] const std::string& master_name() const noexcept { return master_name_; }
    /// The master named last (by a locate or a +switch-master); nullopt before the first. Any thread.
    [[nodiscard]] std::optional<node_address> last_master() const;
    /// How many times the master changed (after the first one known). Any thread.
    [[nodiscard]] std::uint64_t switches() const;

private:
    struct attempt;

    void ask_all(std::chrono::milliseconds budget, connection_config::locate_handler handler);
    void on_answer(const std::shared_ptr<attempt>& a, std::size_t sentinel, error_code ec,
                   std::vector<resp::value> replies);
    void on_push(const resp::value& push);
    void subscribe(std::size_t sentinel);
    void remember(const node_address& master);

    strand_type strand_;
    std::vector<node_address> sentinel_addresses_;
    std::string master_name_;
    node_address master_like_;
    address_map remap_;
    connection_config sentinel_config_;
    std::vector<std::unique_ptr<connection>> sentinels_;      // queries
    std::vector<std::unique_ptr<connection>> subscriptions_;  // +switch-master
    std::vector<switch_fn> on_switch_;
    bool closed_ = false;
    mutable std::mutex status_mutex_;
    std::optional<node_address> last_master_;
    std::uint64_t switches_ = 0;
};

}  // namespace redlock::redis::detail

#endif
