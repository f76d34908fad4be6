// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_TOOLS_LOCAL_SERVERS_HPP
#define REDLOCK_TOOLS_LOCAL_SERVERS_HPP

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <sys/types.h>

namespace redlock::cli {

/// redis-server processes of our own (the embedded default of `redlock demo`): free loopback
/// ports, a temp dir each, no persistence. Stopped by PID, and their dirs removed, on
/// destruction.
class local_servers {
public:
    /// Starts `count` servers (each also given `extra_args`) and waits until each answers PING;
    /// std::runtime_error (with the server's log) if one cannot be started. With
    /// "--cluster-enabled" among the extra args, ports leave room for the cluster bus (+10000).
    explicit local_servers(std::size_t count, std::vector<std::string> extra_args = {});
    ~local_servers();
    local_servers(const local_servers&) = delete;
    local_servers& operator=(const local_servers&) = delete;

    [[nodiscard]] std::vector<std::string> uris() const;
    [[nodiscard]] pid_t pid(std::size_t i) const { return servers_.at(i).pid; }
    [[nodiscard]] unsigned short port(std::size_t i) const { return servers_.at(i).port; }
    [[nodiscard]] std::size_t size() const noexcept { return servers_.size(); }
    [[nodiscard]] const std::string& dir() const noexcept { return dir_; }
    /// SIGKILL, as a crash; idempotent.
    void kill(std::size_t i);
    /// Sends `command` (inline: words split at spaces) to server i and returns the start of its
    /// answer (what one read within 500 ms brings); empty if it is down or silent.
    [[nodiscard]] std::string command(std::size_t i, std::string_view command) const;

private:
    struct server {
        pid_t pid = -1;
        unsigned short port = 0;
    };
    server start_one(std::size_t index);
    void stop_all() noexcept;

    std::string dir_;
    std::vector<std::string> extra_args_;
    std::vector<server> servers_;
};

}  // namespace redlock::cli

#endif
