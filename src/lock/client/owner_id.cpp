// SPDX-License-Identifier: BSL-1.0
#include "lock/client/token.hpp"
#include <redlock/owner_id.hpp>

namespace redlock {

owner_id owner_id::random() {
    return owner_id(detail::make_token());
}

}  // namespace redlock
