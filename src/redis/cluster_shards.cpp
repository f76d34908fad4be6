// SPDX-License-Identifier: BSL-1.0
#include "redis/cluster_shards.hpp"

#include "redis/cluster_slot.hpp"
#include "resp/field_of.hpp"
#include <redlock/error.hpp>

#include <string_view>

namespace redlock::redis::detail {

namespace {

boost::system::error_code bad_reply(std::string& why, std::string what) {
    why = "CLUSTER SHARDS: " + std::move(what);
    return error::unexpected_reply;
}

bool is_pairs(const resp::value& v) {
    return (v.kind == resp::type::map || v.kind == resp::type::array) && v.elements.size() % 2 == 0;
}

bool is_port(const resp::value* v) {
    return v != nullptr && v->kind == resp::type::integer && v->integer > 0 && v->integer <= 65535;
}

}  // namespace

boost::system::error_code read_cluster_shards(const resp::value& reply, const node_address& asked,
                                              slot_map& out, std::string& why, const address_map& remap) {
    out = slot_map{};
    if (reply.is_error()) return bad_reply(why, reply.str);
    if (reply.kind != resp::type::array) return bad_reply(why, "expected an array");
    const bool tls = asked.kind == node_address::transport::tls;
    for (const auto& shard : reply.elements) {
        const auto* slots = is_pairs(shard) ? resp::field_of(shard, "slots") : nullptr;
        const auto* nodes = is_pairs(shard) ? resp::field_of(shard, "nodes") : nullptr;
        if (slots == nullptr || nodes == nullptr || slots->kind != resp::type::array ||
            slots->elements.size() % 2 != 0 || nodes->kind != resp::type::array) {
            return bad_reply(why, "expected a shard's \"slots\" [first, last, ...] and \"nodes\"");
        }
        for (std::size_t i = 0; i < slots->elements.size(); i += 2) {
            const auto& first = slots->elements[i];
            const auto& last = slots->elements[i + 1];
            if (first.kind != resp::type::integer || last.kind != resp::type::integer || first.integer < 0 ||
                last.integer < first.integer || last.integer >= cluster_slots) {
                return bad_reply(why, "a slot range outside 0-16383");
            }
        }
        const resp::value* master = nullptr;
        for (const auto& node : nodes->elements) {
            if (!is_pairs(node)) return bad_reply(why, "expected each node as its fields and values");
            const auto* role = resp::field_of(node, "role");
            if (role != nullptr && role->is_string() && role->str == "master") master = &node;
        }
        // A shard whose master is not known (one that lost it mid-failover) serves nobody yet.
        if (master == nullptr || slots->elements.empty()) continue;
        const auto* port = resp::field_of(*master, "port");
        if (const auto* tls_port = resp::field_of(*master, "tls-port"); tls && is_port(tls_port))
            port = tls_port;
        const auto* endpoint = resp::field_of(*master, "endpoint");
        if (endpoint == nullptr) endpoint = resp::field_of(*master, "ip");
        if (!is_port(port) || endpoint == nullptr || !endpoint->is_string()) {
            return bad_reply(why, "expected the endpoint and port of the master of slots " +
                                      std::to_string(slots->elements[0].integer) + "-" +
                                      std::to_string(slots->elements[1].integer));
        }
        node_address address = asked;
        if (!endpoint->str.empty() && endpoint->str != "?") address.host = endpoint->str;
        address.port = static_cast<unsigned short>(port->integer);
        address = remap.apply(std::move(address));
        for (std::size_t i = 0; i < slots->elements.size(); i += 2)
            out.assign(static_cast<std::uint16_t>(slots->elements[i].integer),
                       static_cast<std::uint16_t>(slots->elements[i + 1].integer), address);
    }
    return {};
}

}  // namespace redlock::redis::detail
