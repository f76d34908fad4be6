#define BOOST_TEST_MODULE redlock_chaos_tests
#include <boost/test/unit_test.hpp>
