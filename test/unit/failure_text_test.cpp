// SPDX-License-Identifier: BSL-1.0
// The text of a round's failed nodes (lock/round_report.hpp): each cause said once, short.
#include "lock/acquire/round_report.hpp"
#include <redlock/error.hpp>

#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

using redlock::error;
using redlock::detail::failure_cause;
using redlock::detail::failures_by_cause;
using redlock::detail::node_cause;

BOOST_AUTO_TEST_SUITE(failure_text_suite)

BOOST_AUTO_TEST_CASE(a_node_that_is_not_connected_says_why_without_its_address_or_the_timeout) {
    BOOST_TEST(failure_cause(error::request_timeout,
                             "not connected: connecting to 127.0.0.1:7001: Connection refused") ==
               "not connected: Connection refused");
    BOOST_TEST(failure_cause(error::request_timeout,
                             "not connected: connecting to [::1]:7001: Connection refused") ==
               "not connected: Connection refused");
    // A connection error of another shape is kept whole.
    BOOST_TEST(failure_cause(error::request_timeout, "not connected: the server refused the credentials") ==
               "not connected: the server refused the credentials");
}

BOOST_AUTO_TEST_CASE(a_quarantined_node_says_which_quarantine_once) {
    const std::string detail = "restart quarantine: it (re)started less than max_ttl ago; it votes in 61 s";
    BOOST_TEST(failure_cause(error::node_quarantined, detail) == detail);
    // Without a detail, the code's message.
    BOOST_TEST(failure_cause(error::node_quarantined, "") ==
               boost::system::error_code(error::node_quarantined).message());
}

BOOST_AUTO_TEST_CASE(any_other_cause_is_the_message_and_the_detail) {
    const auto timeout = boost::system::error_code(error::request_timeout).message();
    BOOST_TEST(failure_cause(error::request_timeout, "") == timeout);
    BOOST_TEST(failure_cause(error::server_error, "NOPERM this user has no permissions") ==
               boost::system::error_code(error::server_error).message() +
                   ": NOPERM this user has no permissions");
}

BOOST_AUTO_TEST_CASE(nodes_with_one_cause_share_it_in_the_order_causes_first_appear) {
    const std::vector<node_cause> failed{{"a:1", "not connected: Connection refused"},
                                         {"b:2", "restart quarantine: it votes in 5 s"},
                                         {"c:3", "not connected: Connection refused"},
                                         {"d:4", "not connected: Connection refused"}};
    BOOST_TEST(
        failures_by_cause(failed) ==
        "a:1, c:3, d:4 (not connected: Connection refused); b:2 (restart quarantine: it votes in 5 s)");
    BOOST_TEST(failures_by_cause(std::vector<node_cause>{{"a:1", "x"}}) == "a:1 (x)");
    BOOST_TEST(failures_by_cause(std::vector<node_cause>{}).empty());
}

BOOST_AUTO_TEST_SUITE_END()
