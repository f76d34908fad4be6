// SPDX-License-Identifier: BSL-1.0
#include "lock/client/resource_keys.hpp"

namespace redlock::detail {

resource_keys keys_for(std::string_view prefix, std::string_view resource) {
    // Each name built in place: one allocation per name, none for a shared tag.
    const auto named = [&](std::string_view suffix) {
        std::string name;
        name.reserve(prefix.size() + resource.size() + 2 + suffix.size());
        name += '{';
        name += prefix;
        name += resource;
        name += '}';
        name += suffix;
        return name;
    };
    return resource_keys{named(":lock"), named(":released")};
}

std::string resource_tag(const resource_keys& keys) {
    constexpr std::string_view lock_suffix = ":lock";
    return keys.lock.substr(0, keys.lock.size() - lock_suffix.size());
}

std::string fence_key_for(const resource_keys& keys) {
    return resource_tag(keys) + ":fence";
}

}  // namespace redlock::detail
