#include "lock/resource_keys.hpp"

namespace redlock::detail {

resource_keys keys_for(std::string_view prefix, std::string_view resource) {
    std::string tag;
    tag.reserve(prefix.size() + resource.size() + 2);
    tag += '{';
    tag += prefix;
    tag += resource;
    tag += '}';
    return resource_keys{tag + ":lock", tag + ":released"};
}

}  // namespace redlock::detail
