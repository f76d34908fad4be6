// SPDX-License-Identifier: BSL-1.0
#include "lock/kinds/kind_choice.hpp"

#include "lock/acquire/lock_options_check.hpp"
#include "lock/client/client_state.hpp"
#include "lock/client/resource_keys.hpp"
#include <redlock/error.hpp>

namespace redlock::detail {

boost::system::error_code choose_lock_kind(const client_state& client, const std::string& resource,
                                           const std::vector<std::string>& resources,
                                           const lock_options& options, std::string place,
                                           std::shared_ptr<const lock_kind>& kind, std::string& why) {
    const auto& cfg = client.config();
    bool split_by_slot = false;
    if (resources.empty()) {
        if (auto ec = validate_lock_options(cfg, resource, options, why)) return ec;
    } else {
        if (auto ec = validate_several_resources(cfg, resources, options, why)) return ec;
        for (std::size_t i = 0; i < client.node_count(); ++i) {
            if (!client.link(i).cluster()) continue;
            split_by_slot = true;
            if (options.replicas > 0) {
                why = "acquire \"" + resource +
                      "\": several resources at once with replicas = " + std::to_string(options.replicas) +
                      " need nodes that each hold every key (single masters or Sentinel); node " +
                      client.node_name(i) +
                      " is a Redis Cluster, whose masters would each have to be waited for";
                return error::invalid_config;
            }
        }
    }
    if (auto same = client.same_server_nodes(); !same.empty()) {
        why = "acquire \"" + resource + "\": " + same;
        return error::invalid_config;
    }
    if (options.fair && resources.empty() && place.empty()) {
        try {
            place = client.make_holder_token(options.label);
        } catch (const std::exception& e) {
            why = e.what();
            return error::internal;
        }
    }
    kind = resources.empty() ? make_lock_kind(keys_for(cfg.key_prefix, resource), options, std::move(place))
                             : make_multi_kind(cfg.key_prefix, resources, options, split_by_slot);
    return {};
}

}  // namespace redlock::detail
