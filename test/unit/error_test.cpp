// SPDX-License-Identifier: BSL-1.0
#include <redlock/error.hpp>

#include <boost/test/unit_test.hpp>

#include <set>
#include <string>

BOOST_AUTO_TEST_SUITE(error_suite)

BOOST_AUTO_TEST_CASE(every_error_has_its_own_message_in_the_redlock_category) {
    using redlock::error;
    std::set<std::string> messages;
    for (int v = static_cast<int>(error::not_acquired); v <= static_cast<int>(error::internal); ++v) {
        boost::system::error_code ec = static_cast<error>(v);
        BOOST_TEST(std::string(ec.category().name()) == "redlock");
        BOOST_TEST_CONTEXT("value " << v) {
            BOOST_TEST(ec.message() != "unknown redlock error");
            BOOST_TEST(messages.insert(ec.message()).second);
            char buf[16];
            // The non-allocating overload truncates safely.
            BOOST_TEST(std::string(ec.category().message(v, buf, sizeof buf)).size() < sizeof buf);
        }
    }
    BOOST_TEST(boost::system::error_code(static_cast<error>(9999)).message() == "unknown redlock error");
}

BOOST_AUTO_TEST_CASE(every_error_has_its_enumerator_name) {
    using redlock::error;
    BOOST_TEST(std::string(redlock::error_name(error::quorum_unreachable)) == "quorum_unreachable");
    BOOST_TEST(std::string(redlock::error_name(error::internal)) == "internal");
    std::set<std::string> names;
    for (int v = static_cast<int>(error::not_acquired); v <= static_cast<int>(error::internal); ++v) {
        BOOST_TEST(names.insert(redlock::error_name(static_cast<error>(v))).second);
    }
    BOOST_TEST(names.count("unknown") == 0u);
    BOOST_TEST(std::string(redlock::error_name(static_cast<error>(9999))) == "unknown");
}

BOOST_AUTO_TEST_SUITE_END()
