#ifndef REDLOCK_TOOLS_LOCAL_SERVERS_HPP
#define REDLOCK_TOOLS_LOCAL_SERVERS_HPP

#include <cstddef>
#include <string>
#include <vector>

#include <sys/types.h>

namespace redlock::cli {

/// redis-server processes of our own (the embedded default of `redlock demo`): free loopback
/// ports, a temp dir each, no persistence. Stopped by PID, and their dirs removed, on
/// destruction.
class local_servers {
public:
    /// Starts `count` servers and waits until each answers PING; std::runtime_error (with the
    /// server's log) if one cannot be started.
    explicit local_servers(std::size_t count);
    ~local_servers();
    local_servers(const local_servers&) = delete;
    local_servers& operator=(const local_servers&) = delete;

    [[nodiscard]] std::vector<std::string> uris() const;
    [[nodiscard]] pid_t pid(std::size_t i) const { return servers_.at(i).pid; }
    /// SIGKILL, as a crash; idempotent.
    void kill(std::size_t i);

private:
    struct server {
        pid_t pid = -1;
        unsigned short port = 0;
    };
    server start_one(std::size_t index);
    void stop_all() noexcept;

    std::string dir_;
    std::vector<server> servers_;
};

}  // namespace redlock::cli

#endif
