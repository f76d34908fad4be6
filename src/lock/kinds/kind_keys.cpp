// SPDX-License-Identifier: BSL-1.0
#include "lock/kinds/kind_keys.hpp"

namespace redlock::detail {

read_write_keys read_write_keys_for(const resource_keys& keys) {
    const std::string tag = resource_tag(keys);
    return read_write_keys{tag + ":rw", tag + ":rw:waiting"};
}

fair_queue_keys fair_keys_for(const resource_keys& keys) {
    const std::string tag = resource_tag(keys);
    return fair_queue_keys{tag + ":queue", tag + ":queue:deadlines", tag + ":queue:tickets",
                           tag + ":queue:handoffs", tag + ":wake:"};
}

std::vector<std::string> inspected_keys(const resource_keys& keys) {
    auto read_write = read_write_keys_for(keys);
    return {keys.lock, fence_key_for(keys), fair_keys_for(keys).queue, std::move(read_write.modes),
            std::move(read_write.waiting)};
}

std::vector<std::string> force_released_keys(const resource_keys& keys) {
    return {keys.lock, keys.released, read_write_keys_for(keys).modes};
}

}  // namespace redlock::detail
