#define BOOST_TEST_MODULE redlock_unit_tests
#include <boost/test/unit_test.hpp>
