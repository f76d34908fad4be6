// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_TEST_SUPPORT_REDIS_CLUSTER_HPP
#define REDLOCK_TEST_SUPPORT_REDIS_CLUSTER_HPP

#include "support/redis_server.hpp"
#include "support/tcp_proxy.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace redlock::test {

struct redis_cluster_options {
    std::size_t masters = 3;
    std::size_t replicas_per_master = 1;
    /// Options of every server; `cluster` is forced to true. Unless `extra_args` set them:
    /// `--cluster-node-timeout 5000` (Redis: 15000; also how long a dead or paused master goes
    /// unnoticed before a replica takes over), `--repl-diskless-sync-delay 0` (Redis: 5 s before
    /// a replica's first sync), and with `--requirepass` also `--masterauth` with the same
    /// password, which redis-cli and MIGRATE use too.
    redis_server_options server;
    /// Each server on a loopback address of its own (127.0.0.2 and on; `server.host` is
    /// ignored), its cluster bus reached through a proxy (a tcp_proxy announced as the bus
    /// port), its replicas logged in to it as user `replication_user`: what cut_off() needs.
    bool partitionable = false;
};

/// A Redis Cluster of real `redis-server` children (see redis_server) on loopback ports:
/// `masters` masters, each with `replicas_per_master` replicas, all 16384 slots assigned.
///
/// With 3 masters or more it is created by `redis-cli --cluster create` (`$REDLOCK_TEST_REDIS_CLI`,
/// else `redis-cli` from PATH), which refuses fewer than 3 masters: smaller clusters are built
/// by hand (CLUSTER ADDSLOTSRANGE / SET-CONFIG-EPOCH / MEET / REPLICATE), servers 0..masters-1
/// being the masters.
///
/// Every wait is bounded; every failure throws std::runtime_error with what the servers said.
/// The servers are owned: they are stopped by the destructor, and by the constructor when it
/// throws halfway. Not thread-safe; use it from the thread that created it (see redis_server
/// on PR_SET_PDEATHSIG).
class redis_cluster {
public:
    /// Starts masters * (1 + replicas_per_master) servers and forms the cluster (redis-cli is
    /// killed if it takes more than 30 s), then waits (20 s at most) until wait_until_ok() holds,
    /// every server's CLUSTER NODES shows every node with its bus link up and every master with
    /// all its replicas, and every replica reports master_link_status:up. (CLUSTER SLOTS may
    /// still leave a replica out for a few seconds: Redis 7 lists a replica there only once the
    /// node has heard that its replication offset is not 0.)
    explicit redis_cluster(redis_cluster_options opts = {});
    /// Stops every server (their destructors).
    ~redis_cluster();

    redis_cluster(const redis_cluster&) = delete;
    redis_cluster& operator=(const redis_cluster&) = delete;

    /// Number of servers, masters and replicas.
    [[nodiscard]] std::size_t size() const noexcept { return servers_.size(); }
    /// Server i in start order (its role may change: see masters(), failover()).
    [[nodiscard]] redis_server& server(std::size_t i);
    /// "127.0.0.1:p1,127.0.0.1:p2,..." of all servers.
    [[nodiscard]] std::string seeds() const;
    /// "redis-cluster://" + seeds()
    [[nodiscard]] std::string uri() const;

    /// The master that owns `slot` according to CLUSTER SLOTS of the first live server.
    [[nodiscard]] redis_server& master_of_slot(std::uint16_t slot);
    /// The live servers whose ROLE is master, in server order.
    [[nodiscard]] std::vector<redis_server*> masters();
    /// CLUSTER MYID of `server`.
    [[nodiscard]] std::string node_id(redis_server& server) const;

    /// Moves one slot from its current master to `to` the way `redis-cli --cluster reshard`
    /// does, in three steps so that a test can act in between:
    /// CLUSTER SETSLOT IMPORTING on `to`, then MIGRATING on the owner: from now on the owner
    /// answers ASK for keys of the slot it does not have. Throws std::invalid_argument if `to`
    /// already owns the slot or a migration of the slot is in progress.
    void begin_slot_migration(std::uint16_t slot, redis_server& to);
    /// CLUSTER GETKEYSINSLOT + MIGRATE ... KEYS in batches, until the source holds no key of the
    /// slot (bounded: 30 s).
    void migrate_slot_keys(std::uint16_t slot);
    /// CLUSTER SETSLOT NODE on the target, the source, then every other live master: from now on
    /// the source answers MOVED. Replicas learn it by gossip (see move_slot). The source must
    /// hold no key of the slot any more (migrate_slot_keys), or the server refuses.
    void finish_slot_migration(std::uint16_t slot);
    /// The three steps, then wait_until_ok() so that every live server agrees.
    void move_slot(std::uint16_t slot, redis_server& to);

    /// Every node announces `hostname` (cluster-announce-hostname) and names the others by
    /// theirs (cluster-preferred-endpoint-type hostname), as a cluster behind NAT or in
    /// containers announces names its clients cannot reach; waits (20 s at most) until every
    /// running node's CLUSTER SLOTS names every master by it. The bus is unchanged.
    void announce_hostname(const std::string& hostname);

    /// CLUSTER FAILOVER (a manual, coordinated failover: no write is lost) on a connected
    /// replica of `master`, once every other master knows it as such; waits (20 s at most)
    /// until it reports role master, wait_until_ok() holds, and the old master, if it runs, is
    /// its replica with its link up. `master` must be running. Returns the promoted server.
    redis_server& failover(redis_server& master);

    /// With options partitionable: cuts `server` from every other node, as a network
    /// partition would, while clients still reach it: its bus proxy drops every other node,
    /// the other proxies drop it, and its `replication_user` is deleted (replication runs on
    /// the data port, which clients share). A master so cut goes on answering until it finds
    /// it cannot reach most masters (cluster-node-timeout), while the others fail it over.
    /// One server at a time. rejoin() heals it (it learns of the failover and turns replica).
    /// Throws std::logic_error without partitionable or with a server already cut off.
    void cut_off(redis_server& server);
    void rejoin(redis_server& server);
    static constexpr const char* replication_user = "replication";

    /// Waits until every live server reports cluster_state:ok in CLUSTER INFO and their
    /// CLUSTER SLOTS agree on one master for each of the 16384 slots; throws
    /// std::runtime_error with the last disagreement otherwise.
    void wait_until_ok(std::chrono::milliseconds limit = std::chrono::seconds(20));

private:
    struct migration {
        redis_server* from = nullptr;
        redis_server* to = nullptr;
    };

    void create_with_redis_cli();
    void create_by_hand();
    void wait_until_formed(std::chrono::steady_clock::time_point deadline, bool replicas_assigned);
    void wait_until_replicas_linked(std::chrono::steady_clock::time_point deadline);
    [[nodiscard]] redis_server& server_on_port(unsigned short port);

    void start_partitionable();
    [[nodiscard]] std::size_t index_of(const redis_server& server) const;
    // The port the other nodes reach server i's bus on (its proxy's with partitionable).
    [[nodiscard]] unsigned short bus_port(std::size_t i) const;

    redis_cluster_options opts_;
    std::vector<std::unique_ptr<redis_server>> servers_;
    std::vector<std::unique_ptr<tcp_proxy>> bus_proxies_;  // partitionable: one per server
    std::optional<std::size_t> cut_off_;                   // the server cut_off() cut
    std::map<std::uint16_t, migration> migrations_;
};

}  // namespace redlock::test

#endif
