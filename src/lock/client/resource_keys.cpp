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

namespace {
std::string tag_of(const resource_keys& keys) {
    constexpr std::string_view lock_suffix = ":lock";
    return keys.lock.substr(0, keys.lock.size() - lock_suffix.size());
}
}  // namespace

std::string fence_key_for(const resource_keys& keys) {
    return tag_of(keys) + ":fence";
}

read_write_keys read_write_keys_for(const resource_keys& keys) {
    const std::string tag = tag_of(keys);
    return read_write_keys{tag + ":rw", tag + ":rw:waiting"};
}

fair_queue_keys fair_keys_for(const resource_keys& keys) {
    const std::string tag = tag_of(keys);
    return fair_queue_keys{tag + ":queue", tag + ":queue:deadlines", tag + ":queue:tickets",
                           tag + ":queue:handoffs", tag + ":wake:"};
}

}  // namespace redlock::detail
