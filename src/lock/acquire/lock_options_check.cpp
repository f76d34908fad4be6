// SPDX-License-Identifier: BSL-1.0
#include "lock/acquire/lock_options_check.hpp"

#include "lock/client/resource_keys.hpp"
#include "lock/kinds/kind_options.hpp"
#include <redlock/error.hpp>

namespace redlock::detail {

using std::chrono::milliseconds;

boost::system::error_code validate_resource(const client_config& cfg, const std::string& resource,
                                            std::string& why) {
    if (resource.empty() || resource.size() > max_resource_length) {
        why = "acquire: the resource name is empty or longer than " + std::to_string(max_resource_length) +
              " bytes";
        return error::invalid_resource;
    }
    if (cfg.key_prefix.empty() && resource.front() == '}') {
        // "{}...": Redis hashes a key whose hash tag is empty as a whole, so the resource's keys
        // (lock, fence, queue) would not share one cluster slot, and its scripts could not run.
        why =
            "acquire \"" + resource + "\": with an empty key_prefix, a resource name must not start with '}'";
        return error::invalid_resource;
    }
    return {};
}

boost::system::error_code validate_lock_options(const client_config& cfg, const std::string& resource,
                                                const lock_options& o, std::string& why) {
    if (auto ec = validate_resource(cfg, resource, why)) return ec;
    if (o.ttl <= milliseconds::zero() || o.ttl > cfg.max_ttl) {
        why = "acquire \"" + resource + "\": ttl " + std::to_string(o.ttl.count()) + " ms is not in (0, " +
              std::to_string(cfg.max_ttl.count()) + "] ms (client_config::max_ttl)";
        return error::invalid_ttl;
    }
    const auto& retry = o.retry ? *o.retry : cfg.retry;
    if (o.wait < milliseconds::zero() || o.node_timeout < milliseconds::zero() ||
        o.min_validity < milliseconds::zero() || retry.min_delay < milliseconds::zero() ||
        retry.min_delay > retry.max_delay) {
        why = "acquire \"" + resource +
              "\": lock_options has a negative duration or retry.min_delay above retry.max_delay";
        return error::invalid_config;
    }
    if (auto ec = check_kind_options(o, false, why)) {
        why = "acquire \"" + resource + "\": " + why;
        return ec;
    }
    if (o.label.size() > 64 || o.label.find('\n') != std::string::npos) {
        why = "acquire \"" + resource + "\": lock_options::label must be at most 64 bytes, without a newline";
        return error::invalid_config;
    }
    if (o.replicas < 0 || o.replica_timeout <= milliseconds::zero()) {
        why = "acquire \"" + resource +
              "\": lock_options::replicas must be >= 0, with a positive replica_timeout";
        return error::invalid_config;
    }
    if (o.watchdog && (o.renew_every < milliseconds::zero() || o.renew_every >= o.ttl ||
                       o.max_hold < milliseconds::zero())) {
        why = "acquire \"" + resource + "\": lock_options::renew_every must be in [0, ttl) and max_hold >= 0";
        return error::invalid_config;
    }
    return {};
}

boost::system::error_code validate_several_resources(const client_config& cfg,
                                                     const std::vector<std::string>& resources,
                                                     const lock_options& o, std::string& why) {
    if (resources.size() > max_resources_at_once) {
        why = "acquire of " + std::to_string(resources.size()) + " resources at once: at most " +
              std::to_string(max_resources_at_once);
        return error::invalid_resource;
    }
    for (const auto& r : resources)
        if (auto ec = validate_resource(cfg, r, why)) return ec;
    if (auto ec = validate_lock_options(cfg, resources.front(), o, why)) return ec;
    if (auto ec = check_kind_options(o, true, why)) {
        why = "acquire of " + std::to_string(resources.size()) + " resources at once (\"" +
              resources.front() + "\", ...): " + why;
        return ec;
    }
    return {};
}

}  // namespace redlock::detail
