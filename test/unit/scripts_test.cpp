// SPDX-License-Identifier: BSL-1.0
// The SHA-1 embedded at build time must be the SHA-1 of the embedded source, or EVALSHA misses.
#include "scripts/scripts_gen.hpp"

#include <boost/test/unit_test.hpp>

#include <cstdio>
#include <set>
#include <string>

#include <openssl/sha.h>

namespace {

std::string sha1_hex(std::string_view data) {
    unsigned char digest[SHA_DIGEST_LENGTH];
    SHA1(reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest);
    std::string hex;
    char buf[3];
    for (unsigned char b : digest) {
        std::snprintf(buf, sizeof buf, "%02x", b);
        hex += buf;
    }
    return hex;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(scripts_suite)

BOOST_AUTO_TEST_CASE(embedded_sha1_matches_the_embedded_source) {
    BOOST_TEST(redlock::scripts::all.size() >= 2u);
    std::set<std::string_view> names;
    for (const auto& s : redlock::scripts::all) {
        BOOST_TEST_CONTEXT("script " << s.name) {
            BOOST_TEST(s.sha1 == sha1_hex(s.source));
            BOOST_TEST(s.source.find('\r') == std::string_view::npos);
            // The licence's line, then the contract block, which names the file.
            const std::string head =
                "-- SPDX-License-Identifier: BSL-1.0\n-- " + std::string(s.name) + ".lua";
            BOOST_TEST(s.source.rfind(head, 0) == 0u);
            BOOST_TEST(names.insert(s.name).second);
        }
    }
}

BOOST_AUTO_TEST_CASE(the_core_scripts_are_present) {
    BOOST_TEST(redlock::scripts::extend.name == "extend");
    BOOST_TEST(redlock::scripts::release.name == "release");
}

BOOST_AUTO_TEST_SUITE_END()
