// SPDX-License-Identifier: BSL-1.0
#include "lock/kinds/hold_reading.hpp"

#include <string>

namespace redlock::detail {

namespace {

// inspect.lua names a hold by the type of the lock key's value.
hold_type type_named(const std::string& name) {
    if (name == "none") return hold_type::free;
    if (name == "string") return hold_type::lock;
    if (name == "hash") return hold_type::reentrant;
    if (name == "zset") return hold_type::semaphore;
    if (name == "rw") return hold_type::read_write;
    return hold_type::other;
}

}  // namespace

bool read_node_inspection(const resp::value& v, node_inspection& out) {
    if (v.kind != resp::type::array || v.elements.size() < 5) return false;
    const auto& e = v.elements;
    const auto is_text = [](const resp::value& x) {
        return x.kind == resp::type::bulk_string || x.kind == resp::type::simple_string;
    };
    if (!is_text(e[0])) return false;
    for (std::size_t i = 1; i < 5; ++i)
        if (e[i].kind != resp::type::integer) return false;
    out.type = type_named(e[0].str);
    out.pttl_ms = e[1].integer;
    out.fence = e[2].integer > 0 ? static_cast<std::uint64_t>(e[2].integer) : 0;
    out.queued = e[3].integer;
    out.permits = e[4].integer;
    out.holders.clear();
    std::size_t first_holder = 5;
    if (out.type == hold_type::reentrant) {
        if (e.size() < 6 || !is_text(e[5])) return false;
        out.owner = e[5].str;
        first_holder = 6;
    }
    out.writers.clear();
    for (std::size_t i = first_holder; i < e.size(); ++i) {
        if (!is_text(e[i])) return false;
        if (out.type != hold_type::read_write) {
            out.holders.push_back(e[i].str);
            continue;
        }
        // "r <token>" or "w <token>"
        const auto& h = e[i].str;
        if (h.size() < 2 || (h[0] != 'r' && h[0] != 'w') || h[1] != ' ') return false;
        out.holders.push_back(h.substr(2));
        if (h[0] == 'w') out.writers.push_back(h.substr(2));
    }
    return true;
}

}  // namespace redlock::detail
