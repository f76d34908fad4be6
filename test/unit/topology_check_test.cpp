// SPDX-License-Identifier: BSL-1.0
// redlock check on cluster and Sentinel voters, without sockets: the replies of a seed and of a
// sentinel read into reports, and the verdicts on hand-made reports.
#include "deployment_check.hpp"
#include "support/resp_values.hpp"
#include "topology_replies.hpp"
#include "unit/healthy_node_report.hpp"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using redlock::cli::cluster_report;
using redlock::cli::finding;
using redlock::cli::node_report;
using redlock::cli::sentinel_answer;
using redlock::cli::sentinel_report;
using redlock::cli::voter_report;
using redlock::test::bulk_reply;
using redlock::test::error_reply;
using redlock::test::integer_reply;
using lv = finding::level;

namespace {

redlock::resp::value aggregate(redlock::resp::type kind, std::vector<redlock::resp::value> elements) {
    redlock::resp::value v;
    v.kind = kind;
    v.elements = std::move(elements);
    return v;
}

redlock::resp::value array_of(std::vector<redlock::resp::value> elements) {
    return aggregate(redlock::resp::type::array, std::move(elements));
}

node_report healthy(std::string name, std::string run_id) {
    return redlock::test::healthy_node(std::move(name), std::move(run_id));
}

cluster_report::master cluster_master(std::string host, std::uint16_t port, std::size_t slots) {
    cluster_report::master m;
    m.host = std::move(host);
    m.port = port;
    m.slots = slots;
    m.replicas = 1;
    m.server = healthy("master " + m.host + ":" + std::to_string(port), "run-" + std::to_string(port));
    return m;
}

// Three masters with a replica each, all slots served, state ok, cluster-node-timeout 5 s.
cluster_report healthy_cluster() {
    cluster_report c;
    c.name = "redis-cluster://10.0.0.1:7000,10.0.0.2:7001";
    c.seed = "10.0.0.1:7000";
    c.state = "ok";
    c.node_timeout_ms = 5000;
    c.masters = {cluster_master("10.0.0.1", 7000, 5461), cluster_master("10.0.0.2", 7001, 5462),
                 cluster_master("10.0.0.3", 7002, 5461)};
    return c;
}

sentinel_answer sentinel(std::string endpoint) {
    sentinel_answer a;
    a.endpoint = std::move(endpoint);
    a.reachable = true;
    a.quorum = 2;
    a.down_after_ms = 2000;
    a.num_slaves = 2;
    a.num_other_sentinels = 2;
    a.flags = "master";
    a.ckquorum_ok = true;
    a.ckquorum = "OK 3 usable Sentinels. Quorum and failover authorization can be reached";
    a.master_host = "10.0.0.5";
    a.master_port = 6379;
    return a;
}

sentinel_answer unanswered(std::string endpoint) {
    sentinel_answer a;
    a.endpoint = std::move(endpoint);
    a.error = "connect_timeout";
    return a;
}

// Three sentinels that agree on a master with two replicas, down-after 2 s.
sentinel_report healthy_sentinels() {
    sentinel_report s;
    s.name = "redis-sentinel://10.0.0.1:26379,10.0.0.2:26379,10.0.0.3:26379#orders";
    s.master_name = "orders";
    s.sentinels = {sentinel("10.0.0.1:26379"), sentinel("10.0.0.2:26379"), sentinel("10.0.0.3:26379")};
    s.master_host = "10.0.0.5";
    s.master_port = 6379;
    s.master = healthy("master 10.0.0.5:6379", "run-m");
    return s;
}

// `quarantine` false: both quarantines off.
redlock::client_config config(bool quarantine = true) {
    redlock::client_config c;
    c.restart_quarantine = quarantine;
    c.failover_quarantine = quarantine;
    return c;
}

std::vector<finding> check(const std::vector<voter_report>& voters, bool quarantine = true) {
    return redlock::cli::check_deployment(config(quarantine), voters);
}

bool mentions(const std::vector<finding>& fs, lv l, const std::string& text) {
    return std::any_of(fs.begin(), fs.end(), [&](const finding& f) {
        return f.severity == l && f.text.find(text) != std::string::npos;
    });
}

std::size_t count_of(const std::vector<finding>& fs, lv l) {
    return static_cast<std::size_t>(
        std::count_if(fs.begin(), fs.end(), [&](const finding& f) { return f.severity == l; }));
}

std::string all_of(const std::vector<finding>& fs) {
    std::string out;
    for (const auto& f : fs)
        out += f.text + "\n";
    return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(topology_check_test)

BOOST_AUTO_TEST_CASE(a_healthy_cluster_is_one_voter_and_safe_with_the_quarantine) {
    auto fs = check({healthy_cluster()});
    BOOST_TEST(redlock::cli::exit_status_of(fs) == 0, all_of(fs));
    BOOST_TEST(mentions(fs, lv::info, "N = 1"));
    BOOST_TEST(
        mentions(fs, lv::info,
                 "nodes[0] redis-cluster://10.0.0.1:7000,10.0.0.2:7001: cluster-node-timeout 5000 ms is "
                 "shorter than max_ttl 60000 ms: a replica can be promoted while a lease is held"));

    // Without the quarantine the promoted replica's grants count at once; each master is also a
    // server without AOF.
    fs = check({healthy_cluster()}, false);
    BOOST_TEST(mentions(fs, lv::unsafe, "cluster-node-timeout 5000 ms is shorter than max_ttl 60000 ms"));
    BOOST_TEST(mentions(fs, lv::unsafe, "with the failover quarantine off its grants count at once"));
    BOOST_TEST(mentions(fs, lv::unsafe, "nodes[0] master 10.0.0.2:7001: no AOF and restart quarantine off"));

    // A node timeout no shorter than max_ttl: a failover comes after every lease ran out.
    auto slow = healthy_cluster();
    slow.node_timeout_ms = 60'000;
    for (auto& m : slow.masters) {
        m.server.aof = true;
        m.server.appendfsync = "always";
    }
    fs = check({slow}, false);
    BOOST_TEST(!mentions(fs, lv::unsafe, "cluster-node-timeout"), all_of(fs));
    BOOST_TEST(redlock::cli::exit_status_of(fs) == 0, all_of(fs));
}

// AOF with appendfsync always and the restart quarantine off, as configuration.md allows: the
// failover quarantine is still on, so a failover within a lease is information, not a risk.
BOOST_AUTO_TEST_CASE(the_restart_quarantine_off_leaves_the_failover_quarantine_on) {
    auto durable = healthy_cluster();
    for (auto& m : durable.masters) {
        m.server.aof = true;
        m.server.appendfsync = "always";
    }
    auto cfg = config();
    cfg.restart_quarantine = false;
    auto fs = redlock::cli::check_deployment(cfg, {durable});
    BOOST_TEST(mentions(fs, lv::info, "cluster-node-timeout 5000 ms is shorter than max_ttl 60000 ms"),
               all_of(fs));
    BOOST_TEST(mentions(fs, lv::info, "the failover quarantine keeps the promoted master from voting"),
               all_of(fs));
    BOOST_TEST(redlock::cli::exit_status_of(fs) == 0, all_of(fs));
    cfg.failover_quarantine = false;
    fs = redlock::cli::check_deployment(cfg, {durable});
    BOOST_TEST(mentions(fs, lv::unsafe, "with the failover quarantine off its grants count at once"),
               all_of(fs));
}

BOOST_AUTO_TEST_CASE(slots_without_a_master_a_failed_state_and_masters_without_replicas_are_warnings) {
    auto c = healthy_cluster();
    c.unserved_slots = 2;
    c.masters[0].slots -= 2;
    c.state = "fail";
    c.masters[1].replicas = 0;
    c.masters[2].replicas = 0;
    c.masters[2].failed_replicas = 1;
    auto fs = check({c});
    BOOST_TEST(mentions(fs, lv::warning, "2 of 16384 slots have no master: locks on resources in them fail"));
    BOOST_TEST(mentions(fs, lv::warning, "cluster_state:fail (CLUSTER INFO of 10.0.0.1:7000)"));
    BOOST_TEST(
        mentions(fs, lv::warning,
                 "nodes[0] master 10.0.0.2:7001 has no replica: a failover is impossible; its slots go "
                 "down with it"));
    BOOST_TEST(mentions(fs, lv::warning,
                        "nodes[0] master 10.0.0.3:7002 has no replica that is up (1 flagged fail)"));
    BOOST_TEST(!mentions(fs, lv::warning, "master 10.0.0.1:7000 has no replica"));
    BOOST_TEST(redlock::cli::exit_status_of(fs) == 1);

    // No replica anywhere: no failover can come, within a lease or not.
    for (auto& m : c.masters) {
        m.replicas = 0;
        m.failed_replicas = 0;
    }
    fs = check({c}, false);
    BOOST_TEST(!mentions(fs, lv::unsafe, "cluster-node-timeout"), all_of(fs));
    BOOST_TEST(!mentions(fs, lv::info, "cluster-node-timeout"), all_of(fs));

    // What could not be read is said, with the server's words.
    c = healthy_cluster();
    c.info_error = "NOPERM this user has no permissions to run the 'cluster|info' command";
    c.node_timeout_error = "NOPERM no config";
    c.nodes_error = "NOPERM no nodes";
    fs = check({c});
    BOOST_TEST(mentions(fs, lv::warning, "CLUSTER INFO failed (NOPERM this user"));
    BOOST_TEST(mentions(fs, lv::warning, "CONFIG GET cluster-node-timeout failed (NOPERM no config)"));
    BOOST_TEST(mentions(fs, lv::info, "CLUSTER NODES failed (NOPERM no nodes)"));
}

BOOST_AUTO_TEST_CASE(seeds_that_do_not_answer_or_give_no_slot_map) {
    cluster_report c;
    c.name = "redis-cluster://10.0.0.1:7000,10.0.0.2:7001";
    c.seed_errors = {"10.0.0.1:7000: Connection refused", "10.0.0.2:7001: connect_timeout"};
    auto fs = check({c});
    BOOST_TEST(mentions(fs, lv::unchecked,
                        "nodes[0] redis-cluster://10.0.0.1:7000,10.0.0.2:7001 did not answer (10.0.0.1:7000: "
                        "Connection refused; 10.0.0.2:7001: connect_timeout): it was not checked"));
    BOOST_TEST(redlock::cli::exit_status_of(fs) == 3);

    // A seed answered, but it is no cluster node (or an ACL refused): no map, no lock.
    c.slots_error = "10.0.0.2:7001: ERR This instance has cluster support disabled";
    fs = check({c});
    BOOST_TEST(mentions(fs, lv::unsafe,
                        "CLUSTER SLOTS failed (10.0.0.2:7001: ERR This instance has cluster support "
                        "disabled): the client reads the slot map the same way; without one, no lock can be "
                        "taken through this voter"));

    // Another seed gave the map: the failed ones are only said.
    c = healthy_cluster();
    c.seed = "10.0.0.2:7001";
    c.seed_errors = {"10.0.0.1:7000: Connection refused"};
    fs = check({c});
    BOOST_TEST(mentions(fs, lv::info,
                        "seed 10.0.0.1:7000: Connection refused; the slot map came from 10.0.0.2:7001"));
    BOOST_TEST(redlock::cli::exit_status_of(fs) == 0, all_of(fs));
}

BOOST_AUTO_TEST_CASE(every_master_of_a_cluster_is_checked_as_a_server) {
    auto c = healthy_cluster();
    c.masters[0].server.version = "6.2.14";
    c.masters[1].server.role = "slave";  // a failover under way: the client follows MOVED
    c.masters[2].server.reachable = false;
    c.masters[2].server.error = "Connection refused";
    c.masters[0].server.maxmemory_policy = "allkeys-lru";
    c.masters[0].server.maxmemory = 1 << 20;
    auto fs = check({c});
    BOOST_TEST(mentions(fs, lv::unsafe, "nodes[0] master 10.0.0.1:7000 runs Redis 6.2.14"));
    BOOST_TEST(mentions(fs, lv::unsafe, "nodes[0] master 10.0.0.1:7000: maxmemory-policy allkeys-lru"));
    BOOST_TEST(
        mentions(fs, lv::warning, "nodes[0] master 10.0.0.2:7001 reports role:slave, though the slot map"));
    BOOST_TEST(!mentions(fs, lv::unsafe, "is a replica"));
    BOOST_TEST(mentions(fs, lv::unchecked,
                        "nodes[0] master 10.0.0.3:7002 did not answer (Connection refused): it was not "
                        "checked; locks on resources in its slots fail while it is down"));
}

// N counts voters; a server is the same as another only across voters.
BOOST_AUTO_TEST_CASE(voters_are_counted_and_compared_not_servers) {
    auto c = healthy_cluster();
    for (auto& m : c.masters)
        m.server.clock_offset_us = 1'000'000;
    auto fs = check({c, healthy("redis://10.0.0.9:6379", "r9"), healthy_sentinels()});
    BOOST_TEST(!mentions(fs, lv::warning, "N = "), all_of(fs));
    BOOST_TEST(!mentions(fs, lv::unsafe, "same server"), all_of(fs));
    BOOST_TEST(mentions(check({c, healthy_sentinels()}), lv::warning, "N = 2"));

    // Two masters of one cluster reporting one run_id are not two votes.
    c.masters[1].server.run_id = c.masters[0].server.run_id;
    BOOST_TEST(!mentions(check({c}), lv::unsafe, "same server"));

    // One server behind two voters is.
    auto s = healthy_sentinels();
    s.master.run_id = "run-7002";
    fs = check({healthy_cluster(), healthy("redis://10.0.0.3:7002", "run-7002"), s});
    BOOST_TEST(mentions(fs, lv::unsafe,
                        "nodes[1] redis://10.0.0.3:7002 is the same server as nodes[0] master 10.0.0.3:7002 "
                        "(run_id run-7002): it would vote twice"),
               all_of(fs));
    BOOST_TEST(
        mentions(fs, lv::unsafe, "nodes[2] master 10.0.0.5:6379 is the same server as nodes[0] master"));

    // Clocks and recorded max_ttls are every probed server's.
    c = healthy_cluster();
    c.masters[2].server.clock_offset_us = 1'000'000 + 700'000;
    c.masters[1].server.recorded_max_ttl_ms = 300'000;
    fs = check({c});
    BOOST_TEST(mentions(fs, lv::warning, "clocks (TIME) are 700 ms apart"));
    BOOST_TEST(mentions(fs, lv::info, "a client of these nodes uses max_ttl 300000 ms"));
}

BOOST_AUTO_TEST_CASE(a_healthy_sentinel_group_is_safe_with_the_quarantine) {
    auto fs = check({healthy_sentinels()});
    BOOST_TEST(redlock::cli::exit_status_of(fs) == 0, all_of(fs));
    BOOST_TEST(
        mentions(fs, lv::info,
                 "#orders: down-after-milliseconds 2000 is shorter than max_ttl 60000 ms: a replica can "
                 "be promoted while a lease is held"));
    fs = check({healthy_sentinels()}, false);
    BOOST_TEST(mentions(fs, lv::unsafe, "down-after-milliseconds 2000 is shorter than max_ttl 60000 ms"));
    BOOST_TEST(mentions(fs, lv::unsafe, "nodes[0] master 10.0.0.5:6379: no AOF and restart quarantine off"));
}

BOOST_AUTO_TEST_CASE(sentinels_that_are_down_too_few_or_cannot_fail_over_are_warnings) {
    auto s = healthy_sentinels();
    s.sentinels[2].reachable = false;
    s.sentinels[2].error = "Connection refused";
    s.sentinels[1].ckquorum_ok = false;
    s.sentinels[1].ckquorum =
        "NOQUORUM 1 usable Sentinels. Not enough available Sentinels to reach the "
        "majority and authorize a failover";
    s.sentinels[0].flags = "master,s_down";
    auto fs = check({s});
    BOOST_TEST(
        mentions(fs, lv::warning, "sentinel 10.0.0.3:26379: Connection refused: the client asks the others"));
    BOOST_TEST(mentions(fs, lv::warning,
                        "SENTINEL CKQUORUM at 10.0.0.2:26379: NOQUORUM 1 usable Sentinels. Not enough "
                        "available Sentinels to reach the majority and authorize a failover: a failover is "
                        "impossible"));
    BOOST_TEST(mentions(fs, lv::warning, "sentinel 10.0.0.1:26379 flags 'orders' master,s_down"));
    BOOST_TEST(count_of(fs, lv::unsafe) == 0u, all_of(fs));

    // Two sentinels in the URI, three watching: list them all. Two watching: run a third.
    s = healthy_sentinels();
    s.sentinels.pop_back();
    fs = check({s});
    BOOST_TEST(
        mentions(fs, lv::warning, "#orders lists 2 sentinel(s): the client finds the master only through"));
    for (auto& a : s.sentinels)
        a.num_other_sentinels = 1;
    fs = check({s});
    BOOST_TEST(mentions(fs, lv::warning,
                        "2 sentinel(s) watch 'orders' (SENTINEL MASTER's num-other-sentinels + 1): a "
                        "failover needs the votes of a majority of them"));
    BOOST_TEST(!mentions(fs, lv::warning, "lists 2 sentinel(s)"));

    // A quorum below a majority; a master without a replica (and so no failover timing).
    s = healthy_sentinels();
    for (auto& a : s.sentinels) {
        a.quorum = 1;
        a.num_slaves = 0;
    }
    fs = check({s}, false);
    BOOST_TEST(mentions(fs, lv::info, "quorum 1 of 3 sentinels: fewer than a majority"));
    BOOST_TEST(mentions(fs, lv::warning,
                        "nodes[0] master 10.0.0.5:6379 has no replica (SENTINEL MASTER's num-slaves 0): a "
                        "failover is impossible"));
    BOOST_TEST(!mentions(fs, lv::unsafe, "down-after"), all_of(fs));

    // Every sentinel down: the voter was not checked.
    s = healthy_sentinels();
    for (auto& a : s.sentinels) {
        a = unanswered(a.endpoint);
    }
    s.master_host.clear();
    fs = check({s});
    BOOST_TEST(mentions(fs, lv::unchecked,
                        "#orders did not answer (10.0.0.1:26379: connect_timeout; 10.0.0.2:26379: "
                        "connect_timeout; 10.0.0.3:26379: connect_timeout): it was not checked"));
    BOOST_TEST(redlock::cli::exit_status_of(fs) == 3);
}

BOOST_AUTO_TEST_CASE(a_name_no_sentinel_knows_and_sentinels_naming_two_masters_are_unsafe) {
    auto s = healthy_sentinels();
    for (auto& a : s.sentinels) {
        a = unanswered(a.endpoint);
        a.reachable = true;
        a.master_error = "ERR No such master with that name";
        a.ckquorum_ok = false;
        a.ckquorum = "ERR No such master with that name";
        a.master_addr_error = "it knows no master by that name";
    }
    s.master_host.clear();
    auto fs = check({s});
    BOOST_TEST(mentions(fs, lv::unsafe,
                        "#orders: no sentinel knows a master named 'orders' (10.0.0.1:26379: it knows no "
                        "master by that name; 10.0.0.2:26379: it knows no master by that name; "
                        "10.0.0.3:26379: it knows no master by that name): no lock can be taken through this "
                        "voter"));
    BOOST_TEST(!mentions(fs, lv::warning, "CKQUORUM"), all_of(fs));

    // One of three does not know it: passed over.
    s = healthy_sentinels();
    s.sentinels[1].master_host.clear();
    s.sentinels[1].master_addr_error = "it knows no master by that name";
    fs = check({s});
    BOOST_TEST(mentions(fs, lv::warning, "sentinel 10.0.0.2:26379 names no master for 'orders'"));
    BOOST_TEST(count_of(fs, lv::unsafe) == 0u, all_of(fs));

    // Two masters named.
    s = healthy_sentinels();
    s.sentinels[2].master_host = "10.0.0.6";
    fs = check({s});
    BOOST_TEST(mentions(fs, lv::unsafe,
                        "the sentinels name different masters for 'orders' (10.0.0.1:26379, 10.0.0.2:26379 "
                        "name 10.0.0.5:6379; 10.0.0.3:26379 name 10.0.0.6:6379)"),
               all_of(fs));

    // The master they name is a replica: the client refuses it (ROLE); a warning, not a replica voter.
    s = healthy_sentinels();
    s.master.role = "slave";
    s.sentinels[0].master_error = "NOPERM sentinel";
    fs = check({s});
    BOOST_TEST(mentions(fs, lv::warning,
                        "nodes[0] master 10.0.0.5:6379 reports role:slave, though the sentinels name it the "
                        "master"));
    BOOST_TEST(mentions(fs, lv::warning, "SENTINEL MASTER failed at 10.0.0.1:26379 (NOPERM sentinel)"));
    BOOST_TEST(count_of(fs, lv::unsafe) == 0u, all_of(fs));
}

BOOST_AUTO_TEST_CASE(a_seeds_replies_are_read_into_the_cluster_report) {
    using redlock::resp::type;
    auto node = [](std::string host, std::int64_t port, std::string id) {
        return array_of({bulk_reply(std::move(host)), integer_reply(port), bulk_reply(std::move(id))});
    };
    auto range = [](std::int64_t first, std::int64_t last, std::vector<redlock::resp::value> nodes) {
        std::vector<redlock::resp::value> e{integer_reply(first), integer_reply(last)};
        e.insert(e.end(), nodes.begin(), nodes.end());
        return array_of(std::move(e));
    };
    const auto slots = array_of({
        range(0, 5460, {node("10.0.0.1", 7000, "id-a"), node("10.0.0.4", 7003, "id-d")}),
        range(5461, 10922, {node("?", 7001, "id-b")}),  // a replica not synced yet: not listed
        range(10925, 16383, {node("10.0.0.3", 7002, "id-c")}),
    });
    const std::string nodes =
        "id-a 10.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-5460\n"
        "id-b 10.0.0.2:7001@17001,host-b master - 0 0 2 connected 5461-10922\n"
        "id-c 10.0.0.3:7002@17002 master - 0 0 3 connected 10925-16383\n"
        "id-d 10.0.0.4:7003@17003 slave id-a 0 0 1 connected\n"
        "id-e 10.0.0.5:7004@17004 slave id-b 0 0 2 connected\n"
        "id-f 10.0.0.6:7005@17005 slave,fail id-c 0 0 3 disconnected\n";
    std::vector<redlock::resp::value> replies{
        slots, redlock::test::text_of(type::verbatim_string, nodes),
        bulk_reply("cluster_enabled:1\r\ncluster_state:fail\r\ncluster_slots_assigned:16382\r\n"),
        aggregate(type::map, {bulk_reply("cluster-node-timeout"), bulk_reply("15000")}),
        error_reply("ERR unknown subcommand 'SHARDS'")};  // a server before 7.0: SLOTS is enough
    cluster_report r;
    std::string why;
    BOOST_TEST_REQUIRE(redlock::cli::read_cluster_replies(replies, "10.0.0.2", false, r, why), why);
    BOOST_TEST(r.unserved_slots == 2u);
    BOOST_TEST(r.state == "fail");
    BOOST_TEST(r.node_timeout_ms.value_or(0) == 15000);
    BOOST_TEST_REQUIRE(r.masters.size() == 3u);
    BOOST_TEST(r.masters[1].host == "10.0.0.2");  // "?": the seed's host
    BOOST_TEST(r.masters[1].port == 7001);
    BOOST_TEST(r.masters[1].slots == 5462u);
    BOOST_TEST(r.masters[0].replicas == 1u);
    BOOST_TEST(r.masters[1].replicas == 1u);  // from CLUSTER NODES
    BOOST_TEST(r.masters[2].replicas == 0u);
    BOOST_TEST(r.masters[2].failed_replicas == 1u);

    // CLUSTER NODES refused: CLUSTER SLOTS' replicas stand.
    replies[1] = error_reply("NOPERM nodes");
    replies[3] = error_reply("ERR unknown command 'CONFIG'");
    r = {};
    BOOST_TEST_REQUIRE(redlock::cli::read_cluster_replies(replies, "10.0.0.2", false, r, why), why);
    BOOST_TEST(r.nodes_error == "NOPERM nodes");
    BOOST_TEST(r.masters[1].replicas == 0u);
    BOOST_TEST(r.node_timeout_error == "ERR unknown command 'CONFIG'");

    // No map: the server's words; a malformed one: what is wrong with it. Never a crash.
    r = {};
    replies[0] = error_reply("ERR This instance has cluster support disabled");
    replies[4] = replies[0];
    BOOST_TEST(!redlock::cli::read_cluster_replies(replies, "h", false, r, why));
    BOOST_TEST(why == "ERR This instance has cluster support disabled");
    BOOST_TEST(r.masters.empty());
    for (const auto& bad :
         {array_of({array_of({integer_reply(0)})}), array_of({range(0, 20000, {node("h", 1, "x")})}),
          array_of({range(0, 10, {bulk_reply("h")})}), bulk_reply("what")}) {
        replies[0] = bad;
        BOOST_TEST(!redlock::cli::read_cluster_replies(replies, "h", false, r, why));
        BOOST_TEST(why.find("CLUSTER SLOTS") == 0u, why);
    }
    BOOST_TEST(!redlock::cli::read_cluster_replies({slots}, "h", false, r, why));
}

// An ACL that allows CLUSTER SHARDS and not CLUSTER SLOTS: the client reads its map by SHARDS, so
// the check does too, and counts each shard's replicas by their health.
BOOST_AUTO_TEST_CASE(a_seed_that_refuses_cluster_slots_is_read_by_cluster_shards) {
    using redlock::resp::type;
    auto node = [](std::string endpoint, std::int64_t port, std::string role, std::string health) {
        return array_of({bulk_reply("endpoint"), bulk_reply(std::move(endpoint)), bulk_reply("port"),
                         integer_reply(port), bulk_reply("tls-port"), integer_reply(port + 1000),
                         bulk_reply("role"), bulk_reply(std::move(role)), bulk_reply("health"),
                         bulk_reply(std::move(health))});
    };
    auto shard = [](std::int64_t first, std::int64_t last, std::vector<redlock::resp::value> nodes) {
        return array_of({bulk_reply("slots"), array_of({integer_reply(first), integer_reply(last)}),
                         bulk_reply("nodes"), array_of(std::move(nodes))});
    };
    const auto shards = array_of({
        shard(0, 8191,
              {node("10.0.0.1", 7000, "master", "online"), node("10.0.0.4", 7003, "replica", "online"),
               node("10.0.0.5", 7004, "replica", "loading")}),
        shard(8192, 16380, {node("?", 7001, "master", "online"), node("10.0.0.6", 7005, "replica", "fail")}),
    });
    std::vector<redlock::resp::value> replies{
        error_reply("NOPERM User check has no permissions to run the 'cluster|slots' command"),
        error_reply("NOPERM User check has no permissions to run the 'cluster|nodes' command"),
        bulk_reply("cluster_enabled:1\r\ncluster_state:ok\r\n"),
        aggregate(type::map, {bulk_reply("cluster-node-timeout"), bulk_reply("15000")}), shards};
    cluster_report r;
    std::string why;
    BOOST_TEST_REQUIRE(redlock::cli::read_cluster_replies(replies, "10.0.0.2", false, r, why), why);
    BOOST_TEST(r.map_from_shards);
    BOOST_TEST(r.unserved_slots == 3u);
    BOOST_TEST_REQUIRE(r.masters.size() == 2u);
    BOOST_TEST(r.masters[0].host == "10.0.0.1");
    BOOST_TEST(r.masters[0].port == 7000);
    BOOST_TEST(r.masters[0].slots == 8192u);
    BOOST_TEST(r.masters[0].replicas == 1u);      // the one loading cannot take over yet
    BOOST_TEST(r.masters[1].host == "10.0.0.2");  // "?": the seed's host
    BOOST_TEST(r.masters[1].slots == 8189u);
    BOOST_TEST(r.masters[1].replicas == 0u);
    BOOST_TEST(r.masters[1].failed_replicas == 1u);
    BOOST_TEST(r.nodes_error.find("NOPERM") == 0u, r.nodes_error);
    r.seed = "10.0.0.2:7001";
    const auto fs = check({r});
    BOOST_TEST(mentions(fs, lv::info, "replicas were counted from CLUSTER SHARDS"), all_of(fs));

    // Over TLS, the masters' TLS ports.
    r = {};
    BOOST_TEST_REQUIRE(redlock::cli::read_cluster_replies(replies, "10.0.0.2", true, r, why), why);
    BOOST_TEST(r.masters.at(0).port == 8000);

    // Both refused: the words of both.
    replies[4] = error_reply("NOPERM User check has no permissions to run the 'cluster|shards' command");
    r = {};
    BOOST_TEST(!redlock::cli::read_cluster_replies(replies, "10.0.0.2", false, r, why));
    BOOST_TEST(why.find("'cluster|slots'") != std::string::npos, why);
    BOOST_TEST(why.find("CLUSTER SHARDS: NOPERM") != std::string::npos, why);
    BOOST_TEST(r.masters.empty());
}

BOOST_AUTO_TEST_CASE(a_sentinels_replies_are_read_into_its_answer) {
    using redlock::resp::type;
    const auto master = aggregate(
        type::map,
        {bulk_reply("name"), bulk_reply("orders"), bulk_reply("flags"), bulk_reply("master,s_down"),
         bulk_reply("quorum"), bulk_reply("2"), bulk_reply("down-after-milliseconds"), bulk_reply("5000"),
         bulk_reply("num-slaves"), bulk_reply("2"), bulk_reply("num-other-sentinels"), bulk_reply("2")});
    sentinel_answer a;
    redlock::cli::read_sentinel_replies(
        {master, redlock::test::text_of(type::simple_string, "OK 3 usable Sentinels"),
         array_of({bulk_reply("10.0.0.5"), bulk_reply("6380")})},
        a);
    BOOST_TEST(a.reachable);
    BOOST_TEST(a.quorum.value_or(0) == 2);
    BOOST_TEST(a.down_after_ms.value_or(0) == 5000);
    BOOST_TEST(a.num_slaves.value_or(0) == 2);
    BOOST_TEST(a.num_other_sentinels.value_or(0) == 2);
    BOOST_TEST(a.flags == "master,s_down");
    BOOST_TEST(a.ckquorum_ok.value_or(false));
    BOOST_TEST(a.master_host == "10.0.0.5");
    BOOST_TEST(a.master_port == 6380);

    a = {};
    redlock::cli::read_sentinel_replies(
        {error_reply("ERR No such master with that name"), error_reply("ERR No such master with that name"),
         redlock::resp::value{}},
        a);
    BOOST_TEST(a.master_error == "ERR No such master with that name");
    BOOST_TEST(!a.ckquorum_ok.value_or(true));
    BOOST_TEST(a.master_host.empty());
    BOOST_TEST(a.master_addr_error == "it knows no master by that name");

    a = {};
    redlock::cli::read_sentinel_replies({integer_reply(1), error_reply("NOQUORUM 1 usable Sentinels"),
                                         array_of({bulk_reply("10.0.0.5"), bulk_reply("port")})},
                                        a);
    BOOST_TEST(a.master_error == "SENTINEL MASTER answered (integer) 1");
    BOOST_TEST(a.ckquorum == "NOQUORUM 1 usable Sentinels");
    BOOST_TEST(a.master_addr_error.find("SENTINEL GET-MASTER-ADDR-BY-NAME answered") == 0u,
               a.master_addr_error);
    a = {};
    redlock::cli::read_sentinel_replies({}, a);
    BOOST_TEST(!a.master_addr_error.empty());

    // The master named by the most sentinels is the one probed.
    sentinel_report r;
    r.sentinels = {sentinel("s1"), sentinel("s2"), sentinel("s3")};
    r.sentinels[0].master_host = "10.0.0.6";
    redlock::cli::choose_master(r);
    BOOST_TEST(r.master_host == "10.0.0.5");
    r.sentinels[1].master_host.clear();
    r.master_host.clear();
    redlock::cli::choose_master(r);
    BOOST_TEST(r.master_host == "10.0.0.6");  // one each: the first
}

BOOST_AUTO_TEST_SUITE_END()
