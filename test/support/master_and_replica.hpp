// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_TEST_SUPPORT_MASTER_AND_REPLICA_HPP
#define REDLOCK_TEST_SUPPORT_MASTER_AND_REPLICA_HPP

#include "support/redis_server.hpp"
#include "support/wait_until.hpp"

#include <boost/test/unit_test.hpp>

#include <memory>
#include <string>
#include <vector>

namespace redlock::test {

/// Whether the master's INFO replication shows `wanted` within 10 s.
inline bool master_reports(const redis_server& master, const std::string& wanted) {
    return wait_until([&] {
        return master.command({"INFO", "replication"}).str.find(wanted) != std::string::npos;
    });
}

/// A fixture: one master (the only server a client is configured with) and one replica of it,
/// online.
struct master_and_replica {
    std::vector<std::unique_ptr<redis_server>> servers = start_redis_servers(1);
    redis_server& master = *servers[0];
    std::unique_ptr<redis_server> replica;

    master_and_replica() {
        redis_server_options as_replica;
        as_replica.extra_args = {"--replicaof", "127.0.0.1", std::to_string(master.port())};
        replica = std::make_unique<redis_server>(as_replica);
        BOOST_TEST_REQUIRE(master_reports(master, "connected_slaves:1"));
        BOOST_TEST_REQUIRE(master_reports(master, "state=online"));
    }
};

}  // namespace redlock::test

#endif
