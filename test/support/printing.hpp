// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_TEST_SUPPORT_PRINTING_HPP
#define REDLOCK_TEST_SUPPORT_PRINTING_HPP

#include <redlock/error.hpp>
#include <redlock/resp/value.hpp>

#include <ostream>

namespace redlock {
// Lets BOOST_TEST print both sides of `ec == redlock::error::x` when it fails.
inline std::ostream& boost_test_print_type(std::ostream& os, error e) {
    return os << make_error_code(e).message() << " [redlock:" << static_cast<int>(e) << "]";
}
namespace resp {
inline std::ostream& boost_test_print_type(std::ostream& os, const value& v) {
    return os << to_string(v);
}
}  // namespace resp
}  // namespace redlock

#endif
