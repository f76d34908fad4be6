// SPDX-License-Identifier: BSL-1.0
// An inspection as users read it: each kind's hold by its name, with its own fields.
#include <redlock/inspection.hpp>

#include <nlohmann/json.hpp>

namespace redlock {

const char* hold_type_name(hold_type t) noexcept {
    switch (t) {
        case hold_type::free:
            return "free";
        case hold_type::lock:
            return "lock";
        case hold_type::reentrant:
            return "reentrant";
        case hold_type::semaphore:
            return "semaphore";
        case hold_type::read_write:
            return "read-write";
        case hold_type::other:
            return "other";
    }
    return "other";
}

namespace {

// Per holder, who it is (identity_of), or null.
nlohmann::json who(const std::vector<std::string>& holders) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& h : holders) {
        if (const auto id = identity_of(h)) {
            out.push_back({{"host", id->host}, {"pid", id->pid}, {"label", id->label}});
        } else {
            out.push_back(nullptr);
        }
    }
    return out;
}

}  // namespace

std::string to_json(const inspection& i) {
    nlohmann::json nodes = nlohmann::json::array();
    for (const auto& n : i.nodes) {
        nlohmann::json node = {{"node", n.node}};
        if (n.error) {
            node["error"] = n.error.message();
            if (!n.detail.empty()) node["detail"] = n.detail;
        } else {
            node["type"] = hold_type_name(n.type);
            node["pttl_ms"] = n.pttl_ms;
            node["holders"] = n.holders;
            node["who"] = who(n.holders);
            if (n.type == hold_type::read_write) node["writers"] = n.writers;
            if (!n.owner.empty()) node["owner"] = n.owner;
            node["fence"] = n.fence;
            node["queued"] = n.queued;
            if (n.permits != 0) node["permits"] = n.permits;
        }
        nodes.push_back(std::move(node));
    }
    nlohmann::json j = {{"resource", i.resource}, {"quorum", i.quorum}, {"held", i.held()},
                        {"holders", i.holders},   {"fence", i.fence},   {"nodes", std::move(nodes)}};
    j["who"] = who(i.holders);
    if (!i.owner.empty()) j["owner"] = i.owner;
    // Tokens and owners are bytes a caller chose: never let one stop the dump.
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace redlock
