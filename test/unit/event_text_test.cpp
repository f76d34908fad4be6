// SPDX-License-Identifier: BSL-1.0
// client_config::on_event's events as a person reads them (redlock/event.hpp).
#include <redlock/error.hpp>
#include <redlock/event.hpp>

#include <boost/test/unit_test.hpp>

#include <set>
#include <string>

using namespace std::chrono_literals;
using redlock::event;
using redlock::event_kind;

BOOST_AUTO_TEST_SUITE(event_text_suite)

BOOST_AUTO_TEST_CASE(every_kind_has_its_own_name) {
    std::set<std::string> names;
    for (int k = static_cast<int>(event_kind::acquired); k <= static_cast<int>(event_kind::cluster_redirect);
         ++k)
        BOOST_TEST(names.insert(redlock::event_kind_name(static_cast<event_kind>(k))).second);
    BOOST_TEST(names.count("unknown") == 0u);
}

BOOST_AUTO_TEST_CASE(a_line_names_the_resource_or_the_node_and_what_else_the_event_says) {
    event lost;
    lost.kind = event_kind::lease_lost;
    lost.resource = "orders:42";
    lost.error = redlock::error::lock_lost;
    lost.detail = "a majority of nodes no longer hold our token";
    BOOST_TEST(redlock::to_string(lost) ==
               "lease_lost orders:42: lock_lost (a majority of nodes no longer hold our token)");

    event released;
    released.kind = event_kind::released;
    released.resource = "orders:42";
    released.duration = 1250ms;
    BOOST_TEST(redlock::to_string(released) == "released orders:42 held 1250 ms");

    event quarantined;
    quarantined.kind = event_kind::node_quarantined;
    quarantined.node_name = "redis://127.0.0.1:7001";
    quarantined.duration = 60000ms;
    BOOST_TEST(redlock::to_string(quarantined) == "node_quarantined redis://127.0.0.1:7001 for 60000 ms");

    event down;
    down.kind = event_kind::node_down;
    down.node_name = "redis://127.0.0.1:7001";
    down.error = boost::system::errc::make_error_code(boost::system::errc::connection_refused);
    BOOST_TEST(redlock::to_string(down).starts_with("node_down redis://127.0.0.1:7001: "));

    event redirect;
    redirect.kind = event_kind::cluster_redirect;
    redirect.node_name = "redis-cluster://127.0.0.1:7000";
    redirect.detail = "MOVED slot 1234 to 127.0.0.1:7002";
    BOOST_TEST(redlock::to_string(redirect) ==
               "cluster_redirect redis-cluster://127.0.0.1:7000 (MOVED slot 1234 to 127.0.0.1:7002)");
}

BOOST_AUTO_TEST_SUITE_END()
