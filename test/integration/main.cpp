// SPDX-License-Identifier: BSL-1.0
#define BOOST_TEST_MODULE redlock_integration_tests
#include <boost/test/unit_test.hpp>
