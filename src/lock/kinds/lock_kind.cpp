#include "lock/kinds/lock_kind.hpp"

namespace redlock::detail {

std::shared_ptr<const lock_kind> make_lock_kind(resource_keys keys, const lock_options& options,
                                                std::string place) {
    if (options.fair) return make_fair_kind(std::move(keys), options, std::move(place));
    if (options.reentrant) return make_reentrant_kind(std::move(keys), options);
    return make_plain_kind(std::move(keys), options);
}

}  // namespace redlock::detail
