// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_TEST_SUPPORT_REDIS_SENTINEL_HPP
#define REDLOCK_TEST_SUPPORT_REDIS_SENTINEL_HPP

#include "support/redis_server.hpp"

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace redlock::test {

struct redis_sentinel_options {
    /// Data servers besides the initial master.
    std::size_t replicas = 2;
    std::size_t sentinels = 3;
    /// Sentinels that must agree the master is down before a failover (`sentinel monitor`).
    /// A failover also needs the votes of a majority of all the sentinels.
    std::size_t quorum = 2;
    std::string master_name = "mymaster";
    /// `sentinel down-after-milliseconds` (Redis: 30 s): how long a dead master goes unnoticed.
    /// Not 1000 or less: a sentinel reconnects to an address at most once a second, and after
    /// a +switch-master it must reach the new master within down-after or it finds it down too;
    /// with 1000 ms a second failover, to the other replica, followed the first in 6 of 84
    /// runs here, most of them on a loaded machine.
    std::chrono::milliseconds down_after{2000};
    /// `sentinel failover-timeout` (Redis: 180 s): a sentinel whose failover failed (no votes)
    /// tries again only after twice this.
    std::chrono::milliseconds failover_timeout{5000};
    /// Options of the data servers (master and replicas). Unless `extra_args` set them:
    /// `--repl-diskless-sync-delay 0` (Redis: 5 s before a replica's first sync), and with
    /// `--requirepass` also `--masterauth` with the same password (every data server may become
    /// a replica); the sentinels then get `sentinel auth-pass`. The sentinels themselves have
    /// no password. With `tls` (and the certificates in extra_args: --tls-cert-file,
    /// --tls-key-file, --tls-ca-cert-file, and --tls-auth-clients if wanted), the group speaks TLS:
    /// the replicas replicate over it (--tls-replication yes), the sentinels listen on a TLS
    /// port of their own with the same certificates and reach every server over TLS, and all of
    /// them know each other by their TLS ports; uri() is then rediss-sentinel://. The plain
    /// ports stay, for the fixture's own commands.
    redis_server_options server;
    /// The replicas log in to their master as user `replication_user`, and the sentinels to
    /// every data server as user `sentinel_user` (both defined on every data server, with a
    /// password of the fixture's own), instead of with the default user: cut_off() can then
    /// cut a master from its replicas and the sentinels while its clients still reach it.
    /// Needs a `--requirepass` in server.extra_args (the default user's): without one, a
    /// connection whose login failed goes on as the default user.
    bool own_users = false;
};

/// A master, its replicas and the sentinels watching them: real `redis-server` children (see
/// redis_server) on loopback ports. The sentinels run `redis-server <dir>/sentinel.conf
/// --sentinel` (redis_server_options::sentinel) and announce 127.0.0.1.
///
/// Every wait is bounded; every failure throws std::runtime_error with what the servers said.
/// The servers are owned: they are stopped by the destructor, and by the constructor when it
/// throws halfway. Not thread-safe; use it from the thread that created it (see redis_server
/// on PR_SET_PDEATHSIG).
///
/// A data server restarted by a test (data_server(i).restart()) comes back as an empty master:
/// the sentinels turn it into a replica of the current master 8 to 20 s later
/// (`+convert-to-slave`), and until then it accepts writes, as a crashed master of a real
/// deployment would.
class redis_sentinel_group {
public:
    /// Starts the master, then the replicas (REPLICAOF the master), waits until every replica's
    /// master_link_status is up, then starts the sentinels and waits until every sentinel names
    /// the master, sees it, all replicas and all other sentinels without a down or disconnected
    /// flag (SENTINEL MASTER / REPLICAS / SENTINELS), and answers OK to SENTINEL CKQUORUM.
    /// All of it within 20 s. Throws std::invalid_argument for options that cannot work
    /// (no sentinel, a quorum of 0 or above the sentinels, a master name with spaces,
    /// own_users without a `--requirepass`).
    explicit redis_sentinel_group(redis_sentinel_options opts = {});
    /// Stops every server (their destructors), the sentinels first.
    ~redis_sentinel_group();

    redis_sentinel_group(const redis_sentinel_group&) = delete;
    redis_sentinel_group& operator=(const redis_sentinel_group&) = delete;

    [[nodiscard]] const redis_sentinel_options& options() const noexcept { return opts_; }

    /// Data server i in start order: 0 is the initial master, 1.. the initial replicas (their
    /// roles change with failovers: see master()).
    [[nodiscard]] redis_server& data_server(std::size_t i);
    [[nodiscard]] std::size_t data_servers() const noexcept { return data_.size(); }
    [[nodiscard]] redis_server& sentinel(std::size_t i);
    [[nodiscard]] std::size_t sentinels() const noexcept { return sentinels_.size(); }
    /// "127.0.0.1:p1,127.0.0.1:p2,..." of all sentinels (their TLS ports over TLS).
    [[nodiscard]] std::string sentinel_addresses() const;
    /// "redis-sentinel://" (over TLS "rediss-sentinel://") + sentinel_addresses() + "#" + master
    /// name; with the `--requirepass`
    /// of options().server, "redis-sentinel://:<password>@..." (not percent-encoded).
    [[nodiscard]] std::string uri() const;

    /// The data server that SENTINEL GET-MASTER-ADDR-BY-NAME names on the first running sentinel
    /// that answers. Throws std::runtime_error if none answers, or that server is not ours, not
    /// running, or its ROLE is not master.
    [[nodiscard]] redis_server& master();

    /// SIGKILLs master(), then waits (60 s at most) as wait_for_failover() does. The killed
    /// server stays down (restart it with data_server(i).restart()). Returns the new master.
    redis_server& kill_master_and_wait_for_failover(bool wait_for_replicas = true);
    /// SENTINEL FAILOVER on the sentinel that named master(): a failover without agreement,
    /// the old master still running; waits (30 s at most) as wait_for_failover() does. The old
    /// master goes on answering as a master (two masters) until the sentinels convert it, 8 to
    /// 20 s later (see wait_until_replicas_linked()). Returns the new master.
    redis_server& failover(bool wait_for_replicas = true);

    /// With options().own_users: deletes the replicas' and the sentinels' users on data
    /// server `i`, which closes their connections to it and refuses the new ones, while its
    /// other clients go on (a master on the small side of a network partition: the sentinels
    /// find it down and promote a replica, and it goes on as a master). rejoin() defines them
    /// again (a restart of the server does too). Throws std::logic_error without own_users,
    /// std::runtime_error if the server refuses.
    void cut_off(std::size_t i);
    void rejoin(std::size_t i);
    static constexpr const char* replication_user = "replication";
    static constexpr const char* sentinel_user = "sentinel";

    /// Waits until a majority of the running sentinels name a data server other than `old` as
    /// the master, that server answers ROLE master, and (with `wait_for_replicas`) every
    /// other running data server but `old` is its replica with master_link_status up.
    /// Returns the new master.
    redis_server& wait_for_failover(const redis_server& old, bool wait_for_replicas = true,
                                    std::chrono::milliseconds limit = std::chrono::seconds(30));
    /// Waits until every running sentinel names the same data server as the master, flags it
    /// `master` only (no failover in progress, not down), and that server runs and answers ROLE
    /// master. The default allows a failover that split the sentinels' votes: a sentinel that
    /// lost an election may keep its failover in progress, and its old master, for several
    /// failover timeouts (a fresh-clone CI run saw one still at it after 20 s).
    void wait_until_stable(std::chrono::milliseconds limit = std::chrono::seconds(45));
    /// What wait_until_stable() waits for now (every running sentinel naming the same master
    /// with the same config-epoch, flagged `master` only, a running server that answers ROLE
    /// master), or "" if the group is stable. Does not throw.
    [[nodiscard]] std::string unstable();
    /// Waits until every running data server but master() is its replica with
    /// master_link_status up: after failover(), the old master too; after a restart(), the
    /// restarted server too.
    void wait_until_replicas_linked(std::chrono::milliseconds limit = std::chrono::seconds(30));

private:
    struct named_master {
        redis_server* master = nullptr;
        redis_server* sentinel = nullptr;  // the one that named it
    };

    [[nodiscard]] named_master ask_for_master();
    void wait_until_formed(std::chrono::steady_clock::time_point deadline);
    [[nodiscard]] redis_server* data_server_on_port(unsigned short port);

    redis_sentinel_options opts_;
    std::vector<std::unique_ptr<redis_server>> data_;
    std::vector<std::unique_ptr<redis_server>> sentinels_;
};

}  // namespace redlock::test

#endif
