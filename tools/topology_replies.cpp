// SPDX-License-Identifier: BSL-1.0
#include "topology_replies.hpp"

#include "redis/cluster_shards.hpp"
#include "resp/field_of.hpp"

#include <charconv>
#include <cstdint>
#include <map>
#include <optional>
#include <string_view>

namespace redlock::cli {

namespace {

constexpr std::size_t cluster_slots = 16384;

enum cluster_reply : std::size_t { slots, nodes, info, node_timeout, shards, cluster_replies };
enum sentinel_reply : std::size_t { master, ckquorum, master_addr, sentinel_replies };

std::optional<std::int64_t> integer_of(const resp::value& v) {
    if (v.kind == resp::type::integer) return v.integer;
    if (!v.is_string() || v.is_error()) return std::nullopt;
    std::int64_t out = 0;
    const auto* end = v.str.data() + v.str.size();
    const auto r = std::from_chars(v.str.data(), end, out);
    if (r.ec != std::errc{} || r.ptr != end) return std::nullopt;
    return out;
}

std::optional<std::uint16_t> port_of(const resp::value& v) {
    const auto port = integer_of(v);
    if (!port || *port <= 0 || *port > 65535) return std::nullopt;
    return static_cast<std::uint16_t>(*port);
}

// An error reply's words, or what `command` answered instead of what was expected.
std::string words_of(const char* command, const resp::value& v) {
    return v.is_error() ? v.str : std::string(command) + " answered " + resp::to_string(v);
}

std::vector<std::string_view> words(std::string_view line) {
    std::vector<std::string_view> out;
    std::size_t at = 0;
    while (at < line.size()) {
        const auto end = std::min(line.find(' ', at), line.size());
        if (end > at) out.push_back(line.substr(at, end - at));
        at = end + 1;
    }
    return out;
}

bool has_flag(std::string_view flags, std::string_view flag) {
    std::size_t at = 0;
    while (at <= flags.size()) {
        const auto end = std::min(flags.find(',', at), flags.size());
        if (flags.substr(at, end - at) == flag) return true;
        at = end + 1;
    }
    return false;
}

// CLUSTER SLOTS: [[first, last, [host, port, id, ...] of the master, [host, port, ...] of each
// replica], ...]. False, with why, if it is not one.
bool read_slots(const resp::value& reply, const std::string& seed_host, cluster_report& r, std::string& why) {
    if (reply.is_error()) {
        why = reply.str;
        return false;
    }
    if (reply.kind != resp::type::array) {
        why = "CLUSTER SLOTS answered " + resp::to_string(reply) + ", not an array";
        return false;
    }
    std::vector<cluster_report::master> masters;
    std::vector<int> owner(cluster_slots, -1);
    for (const auto& range : reply.elements) {
        const auto bad = [&](const std::string& what) {
            why = "CLUSTER SLOTS: " + what + " in " + resp::to_string(range);
            return false;
        };
        if (range.kind != resp::type::array || range.elements.size() < 3)
            return bad("expected [first, last, master, replicas...]");
        const auto first = integer_of(range.elements[0]), last = integer_of(range.elements[1]);
        if (!first || !last || *first < 0 || *last < *first ||
            *last >= static_cast<std::int64_t>(cluster_slots))
            return bad("a slot range outside 0-16383");
        const auto& m = range.elements[2];
        const auto port = m.elements.size() >= 2 ? port_of(m.elements[1]) : std::nullopt;
        if (m.kind != resp::type::array || !port || !m.elements[0].is_string())
            return bad("expected [host, port, ...] for the master");
        const auto host =
            m.elements[0].str.empty() || m.elements[0].str == "?" ? seed_host : m.elements[0].str;
        auto it = std::find_if(masters.begin(), masters.end(),
                               [&](const auto& known) { return known.host == host && known.port == *port; });
        if (it == masters.end()) {
            cluster_report::master fresh;
            fresh.host = host;
            fresh.port = *port;
            if (m.elements.size() >= 3 && m.elements[2].is_string()) fresh.id = m.elements[2].str;
            masters.push_back(std::move(fresh));
            it = masters.end() - 1;
        }
        it->replicas = std::max(it->replicas, range.elements.size() - 3);
        for (auto slot = *first; slot <= *last; ++slot)
            owner[static_cast<std::size_t>(slot)] = static_cast<int>(it - masters.begin());
    }
    r.unserved_slots = 0;
    for (const auto o : owner) {
        if (o < 0)
            ++r.unserved_slots;
        else
            ++masters[static_cast<std::size_t>(o)].slots;
    }
    // A master whose every range another one took over serves nothing: not a master of the map.
    std::erase_if(masters, [](const auto& m) { return m.slots == 0; });
    r.masters = std::move(masters);
    return true;
}

// CLUSTER SHARDS, from a server that refuses CLUSTER SLOTS (an ACL may allow SHARDS alone): the
// map as the client reads it (redis/cluster_shards), and each shard's replicas by their role and
// health ("online": can take over; "fail"; "loading": not synced yet, not counted).
bool read_shards(const resp::value& reply, const std::string& seed_host, bool tls, cluster_report& r,
                 std::string& why) {
    redis::node_address asked;
    asked.kind = tls ? redis::node_address::transport::tls : redis::node_address::transport::tcp;
    asked.host = seed_host;
    redis::detail::slot_map map;
    if (redis::detail::read_cluster_shards(reply, asked, map, why)) return false;
    std::vector<cluster_report::master> masters(map.masters().size());
    for (std::size_t i = 0; i < masters.size(); ++i) {
        masters[i].host = map.masters()[i].host;
        masters[i].port = map.masters()[i].port;
    }
    r.unserved_slots = 0;
    for (std::size_t slot = 0; slot < cluster_slots; ++slot) {
        if (const auto m = map.master_of(static_cast<std::uint16_t>(slot)))
            ++masters[*m].slots;
        else
            ++r.unserved_slots;
    }
    for (const auto& shard : reply.elements) {
        // The reader above took the shape: a shard with slots has a range as its first two.
        const auto* ranges = resp::field_of(shard, "slots");
        const auto* nodes = resp::field_of(shard, "nodes");
        if (ranges == nullptr || nodes == nullptr || ranges->elements.empty()) continue;
        const auto m = map.master_of(static_cast<std::uint16_t>(ranges->elements.front().integer));
        if (!m) continue;
        for (const auto& node : nodes->elements) {
            const auto* role = resp::field_of(node, "role");
            const auto* health = resp::field_of(node, "health");
            if (role == nullptr || role->str != "replica") continue;
            const std::string_view state = health != nullptr ? std::string_view(health->str) : "online";
            if (state == "online") ++masters[*m].replicas;
            if (state == "fail") ++masters[*m].failed_replicas;
        }
    }
    std::erase_if(masters, [](const auto& m) { return m.slots == 0; });
    r.masters = std::move(masters);
    return true;
}

// CLUSTER NODES: one line per node, "<id> <ip:port@cport[,hostname]> <flags> <master id> ...":
// the replicas of each master, those flagged fail apart.
void read_nodes(const resp::value& reply, cluster_report& r) {
    if (reply.is_error() || !reply.is_string()) {
        r.nodes_error = words_of("CLUSTER NODES", reply);
        return;
    }
    struct node {
        std::string id, host, flags, master;
        std::uint16_t port = 0;
    };
    std::vector<node> all;
    std::string_view text = reply.str;
    while (!text.empty()) {
        const auto end = std::min(text.find('\n'), text.size());
        const auto fields = words(text.substr(0, end));
        text.remove_prefix(std::min(end + 1, text.size()));
        if (fields.size() < 4) continue;
        node n{std::string(fields[0]), {}, std::string(fields[2]), std::string(fields[3])};
        auto address = fields[1].substr(0, fields[1].find_first_of("@,"));
        const auto colon = address.rfind(':');
        unsigned port = 0;
        if (colon != std::string_view::npos &&
            std::from_chars(address.data() + colon + 1, address.data() + address.size(), port).ec ==
                std::errc{} &&
            port <= 65535) {
            n.host = std::string(address.substr(0, colon));
            n.port = static_cast<std::uint16_t>(port);
        }
        all.push_back(std::move(n));
    }
    for (auto& m : r.masters) {
        auto id = m.id;
        if (id.empty()) {
            for (const auto& n : all)
                if (n.port == m.port && n.host == m.host) id = n.id;
        }
        if (id.empty()) continue;  // not in CLUSTER NODES: keep CLUSTER SLOTS' count
        m.replicas = 0;
        m.failed_replicas = 0;
        for (const auto& n : all) {
            if (n.master != id || !(has_flag(n.flags, "slave") || has_flag(n.flags, "replica"))) continue;
            if (has_flag(n.flags, "fail") || has_flag(n.flags, "fail?") || has_flag(n.flags, "noaddr"))
                ++m.failed_replicas;
            else if (!has_flag(n.flags, "handshake"))
                ++m.replicas;
        }
    }
}

}  // namespace

resp::request cluster_request() {
    resp::request req;
    req.push("CLUSTER", "SLOTS");
    req.push("CLUSTER", "NODES");
    req.push("CLUSTER", "INFO");
    req.push("CONFIG", "GET", "cluster-node-timeout");
    req.push("CLUSTER", "SHARDS");
    return req;
}

bool read_cluster_replies(const std::vector<resp::value>& replies, const std::string& seed_host, bool tls,
                          cluster_report& r, std::string& why) {
    if (replies.size() != cluster_replies) {
        why = "expected " + std::to_string(static_cast<std::size_t>(cluster_replies)) + " replies, got " +
              std::to_string(replies.size());
        return false;
    }
    cluster_report read = r;
    if (!read_slots(replies[slots], seed_host, read, why)) {
        // The client reads the map by whichever of the two the server allows.
        std::string shards_why;
        if (!read_shards(replies[shards], seed_host, tls, read, shards_why)) {
            const bool same_refusal = replies[shards].is_error() && replies[slots].is_error() &&
                                      replies[shards].str == replies[slots].str;
            if (!same_refusal) why += "; " + shards_why;
            return false;
        }
        read.map_from_shards = true;
    }
    read_nodes(replies[nodes], read);
    if (replies[info].is_error() || !replies[info].is_string())
        read.info_error = words_of("CLUSTER INFO", replies[info]);
    else
        read.state = info_field(replies[info].str, "cluster_state");
    if (replies[node_timeout].is_error()) {
        read.node_timeout_error = replies[node_timeout].str;
    } else if (const auto* v = resp::field_of(replies[node_timeout], "cluster-node-timeout")) {
        read.node_timeout_ms = integer_of(*v);
    }
    if (!read.node_timeout_ms && read.node_timeout_error.empty())
        read.node_timeout_error = "unexpected reply " + resp::to_string(replies[node_timeout]);
    r = std::move(read);
    return true;
}

resp::request sentinel_request(const std::string& master_name) {
    resp::request req;
    req.push("SENTINEL", "MASTER", master_name);
    req.push("SENTINEL", "CKQUORUM", master_name);
    req.push("SENTINEL", "GET-MASTER-ADDR-BY-NAME", master_name);
    return req;
}

void read_sentinel_replies(const std::vector<resp::value>& replies, sentinel_answer& a) {
    a.reachable = true;
    if (replies.size() != sentinel_replies) {
        a.master_addr_error = "expected 3 replies, got " + std::to_string(replies.size());
        return;
    }
    const auto& m = replies[master];
    if (m.is_error() || !m.is_aggregate()) {
        a.master_error = words_of("SENTINEL MASTER", m);
    } else {
        const auto number = [&](std::string_view field) {
            const auto* v = resp::field_of(m, field);
            return v ? integer_of(*v) : std::nullopt;
        };
        a.quorum = number("quorum");
        a.down_after_ms = number("down-after-milliseconds");
        a.num_slaves = number("num-slaves");
        a.num_other_sentinels = number("num-other-sentinels");
        if (const auto* flags = resp::field_of(m, "flags")) a.flags = flags->str;
    }
    const auto& ck = replies[ckquorum];
    a.ckquorum_ok = !ck.is_error() && ck.is_string() && ck.str.starts_with("OK");
    a.ckquorum = ck.is_string() ? ck.str : words_of("SENTINEL CKQUORUM", ck);
    const auto& addr = replies[master_addr];
    const auto port = addr.elements.size() == 2 ? port_of(addr.elements[1]) : std::nullopt;
    if (addr.is_null()) {
        a.master_addr_error = "it knows no master by that name";
    } else if (addr.is_error()) {
        a.master_addr_error = addr.str;
    } else if (addr.kind != resp::type::array || !port || !addr.elements[0].is_string() ||
               addr.elements[0].str.empty()) {
        a.master_addr_error = "SENTINEL GET-MASTER-ADDR-BY-NAME answered " + resp::to_string(addr);
    } else {
        a.master_host = addr.elements[0].str;
        a.master_port = *port;
    }
}

void choose_master(sentinel_report& r) {
    std::map<std::pair<std::string, std::uint16_t>, std::size_t> votes;
    std::size_t best = 0;
    for (const auto& a : r.sentinels) {
        if (a.master_host.empty()) continue;
        const auto n = ++votes[{a.master_host, a.master_port}];
        if (n > best) {
            best = n;
            r.master_host = a.master_host;
            r.master_port = a.master_port;
        }
    }
}

}  // namespace redlock::cli
