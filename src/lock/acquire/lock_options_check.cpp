// SPDX-License-Identifier: BSL-1.0
#include "lock/acquire/lock_options_check.hpp"

#include "lock/client/resource_keys.hpp"
#include "lock/kinds/kind_mixing.hpp"
#include <redlock/error.hpp>

namespace redlock::detail {

using std::chrono::milliseconds;

namespace {
// A permit is a member of one sorted set: a count far above this is a mistake, not a limit.
constexpr int max_permits = 1000000;

// A kind's trait as the caller asked for it.
std::string_view option_name(kind_trait trait) noexcept {
    switch (trait) {
        case kind_trait::reentrant:
            return "lock_options::reentrant";
        case kind_trait::fair:
            return "lock_options::fair";
        case kind_trait::fenced:
            return "lock_options::fenced";
        case kind_trait::semaphore:
            return "lock_options::permits";
        case kind_trait::read:
            return "lock_options::mode read";
        case kind_trait::write:
            return "lock_options::mode write";
        case kind_trait::several:
            return "several resources";
        case kind_trait::count:
            break;
    }
    return "?";
}
}  // namespace

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
    if (o.reentrant != !o.owner.empty() || o.owner.str().size() > 256) {
        why = "acquire \"" + resource +
              "\": lock_options::owner must be set (at most 256 bytes) with reentrant, and only with it";
        return error::invalid_config;
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
    if (o.permits < 0 || o.permits > max_permits) {
        why = "acquire \"" + resource + "\": lock_options::permits must be in [0, " +
              std::to_string(max_permits) + "]";
        return error::invalid_config;
    }
    if ((o.fair || o.mode != lock_mode::exclusive) && o.queue_timeout < milliseconds(3)) {
        why = "acquire \"" + resource +
              "\": a fair or read-write lock's lock_options::queue_timeout must be at least 3 ms";
        return error::invalid_config;
    }
    if (const auto conflict = first_conflict(traits_of(o, false))) {
        why = "acquire \"" + resource + "\": " + describe(*conflict, option_name);
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
    if (const auto conflict = first_conflict(traits_of(o, true))) {
        why = "acquire of " + std::to_string(resources.size()) + " resources at once (\"" +
              resources.front() + "\", ...): " + describe(*conflict, option_name);
        return error::invalid_config;
    }
    return {};
}

}  // namespace redlock::detail
