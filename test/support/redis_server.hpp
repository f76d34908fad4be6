// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_TEST_SUPPORT_REDIS_SERVER_HPP
#define REDLOCK_TEST_SUPPORT_REDIS_SERVER_HPP

#include <redlock/resp/value.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

namespace redlock::test {

struct redis_server_options {
    /// The loopback address it listens on. Another one (127.0.0.2, ...: all of 127/8 is
    /// loopback) gives it an address of its own, from which it also makes its own connections
    /// (replication, cluster bus: --bind-source-addr), so that a fault proxy can tell them from
    /// the others'. Ports are still picked free on 127.0.0.1: a port names one server.
    std::string host = "127.0.0.1";
    bool appendonly = false;               // --appendonly yes|no
    std::string appendfsync = "everysec";  // with appendonly: always|everysec|no
    std::vector<std::string> extra_args;   // e.g. {"--requirepass", "pw"}
    /// Also listen for TLS on tls_port() (a second free port); extra_args must name the
    /// certificates (--tls-cert-file, --tls-key-file, --tls-ca-cert-file). The plain port stays,
    /// for the fixture's own commands.
    bool tls = false;
    /// Cluster mode (--cluster-enabled yes, nodes.conf in dir()), its cluster bus on a free port
    /// of its own: the default, port + 10000, does not exist above port 55535.
    bool cluster = false;
    /// Sentinel mode: started as `redis-server <dir>/sentinel.conf --sentinel --port P ...`.
    /// Sentinel refuses to start without a writable config file and rewrites it with what it
    /// learns (replicas, other sentinels, epochs, the master after a failover). The constructor
    /// writes `port`, `dir` and then the lines of `sentinel_config` (such as `sentinel monitor
    /// ...`) into that file; restart() keeps the file as Sentinel left it, as a restarted sentinel
    /// of a real deployment would. Not with `cluster`. A sentinel answers PING, INFO, ROLE,
    /// SENTINEL and a few more; a `--requirepass` in extra_args is then the sentinel's own.
    bool sentinel = false;
    std::string sentinel_config;
};

/// A real `redis-server` child process on a free loopback port, in its own temp dir.
///
/// The binary is `$REDLOCK_TEST_REDIS_SERVER`, else `redis-server` from PATH.
///
/// Cleanup is guaranteed even when the test does not unwind: every live server is in a
/// process-wide registry that an atexit handler (SIGKILL, reap, remove the dir) and handlers for
/// SIGABRT/SIGSEGV/SIGBUS/SIGFPE/SIGILL/SIGINT/SIGTERM (SIGKILL, then re-raise) go through, and
/// each server carries PR_SET_PDEATHSIG=SIGKILL so it dies with the test process even on SIGKILL.
/// The signal handlers are installed only for signals that still have their default action
/// (Boost.Test's own crash handling inside test cases is left alone).
/// PR_SET_PDEATHSIG fires when the *thread* that forked the server exits, not the process:
/// start servers from a long-lived thread (the test's main thread), never from a short-lived
/// worker thread, or they will be killed when that thread ends.
///
/// Not thread-safe per object; different objects may be used from different threads.
class redis_server {
public:
    /// Starts the server and waits until it answers PING. Throws std::runtime_error (with the
    /// tail of its log) if it cannot be started.
    explicit redis_server(redis_server_options opts = {});
    /// stop(), then removes the temp dir.
    ~redis_server();

    redis_server(const redis_server&) = delete;
    redis_server& operator=(const redis_server&) = delete;

    [[nodiscard]] unsigned short port() const noexcept { return port_; }
    /// options.host
    [[nodiscard]] const std::string& host() const noexcept { return opts_.host; }
    /// "redis://<host>:<port>"
    [[nodiscard]] std::string uri() const;
    /// With options.tls: the TLS port, and "rediss://<host>:<tls_port>".
    [[nodiscard]] unsigned short tls_port() const noexcept { return tls_port_; }
    [[nodiscard]] std::string tls_uri() const;
    /// With options.cluster: the cluster bus port.
    [[nodiscard]] unsigned short cluster_port() const noexcept { return cluster_port_; }
    /// With options.sentinel: the config file Sentinel reads and rewrites, inside dir().
    [[nodiscard]] std::string sentinel_config_file() const;
    /// Path of its unix socket, inside dir().
    [[nodiscard]] std::string unix_socket() const;
    [[nodiscard]] const std::string& dir() const noexcept { return dir_; }
    /// The server's PID; -1 when it is not running (stopped, killed, or exited by itself).
    [[nodiscard]] pid_t pid() const noexcept;
    /// False once the process has exited, even if it died on its own (e.g. DEBUG SEGFAULT).
    [[nodiscard]] bool running() const noexcept;

    /// SIGCONT (in case it is paused), SIGTERM, waits up to 5 s, then SIGKILL. Always reaps.
    void stop();
    /// SIGKILL + reap: a crash. Without persistence all data is lost.
    void kill9();
    /// Starts it again on the same port and dir (AOF/RDB files there are kept); waits for PING.
    /// Stops it first if it is running. Throws std::runtime_error if it cannot be started.
    void restart();
    /// SIGSTOP; returns once the process is stopped. The kernel still accepts connections on
    /// its listening socket, but nothing is answered: a hung server.
    void pause();
    /// SIGCONT.
    void resume();

    /// Sends one command over a fresh blocking connection to host():port() and returns the parsed reply
    /// (server errors are values of type `error`). If `--requirepass` is among the extra args,
    /// `AUTH` with that password is sent first on the same connection and its reply dropped.
    /// Throws std::runtime_error on I/O failure, a broken reply, or when the whole exchange does
    /// not finish within 5 s (or `timeout`).
    redlock::resp::value command(const std::vector<std::string>& args) const;
    redlock::resp::value command(const std::vector<std::string>& args,
                                 std::chrono::milliseconds timeout) const;

private:
    void spawn();
    void write_sentinel_config() const;
    void wait_ready(std::size_t log_offset);
    [[nodiscard]] bool exited() const noexcept;
    int reap() noexcept;  // returns the wait status, -1 if unknown

    redis_server_options opts_;
    std::optional<std::string> password_;
    std::string dir_;
    pid_t creator_pid_ = -1;  // only this process may remove dir_
    unsigned short port_ = 0;
    unsigned short tls_port_ = 0;
    unsigned short cluster_port_ = 0;
    std::uint32_t host_address_ = 0;  // options.host, in network byte order
    pid_t pid_ = -1;
    int slot_ = -1;  // index in the process-wide registry of live servers
    bool paused_ = false;
};

/// Starts n servers with the same options (for N = 5 Redlock tests). If one fails to start,
/// the ones already started are stopped and the error is rethrown.
std::vector<std::unique_ptr<redis_server>> start_redis_servers(std::size_t n, redis_server_options opts = {});

}  // namespace redlock::test

#endif
