// SPDX-License-Identifier: BSL-1.0
#include "redis/cluster_topology.hpp"

#include "redis/cluster_slot.hpp"
#include "resp/reply_parser.hpp"
#include <redlock/error.hpp>

#include <charconv>

namespace redlock::redis::detail {

namespace {

bool read_port(std::string_view text, unsigned short& port) {
    unsigned value = 0;
    const auto r = std::from_chars(text.data(), text.data() + text.size(), value);
    if (r.ec != std::errc{} || r.ptr != text.data() + text.size() || value == 0 || value > 65535)
        return false;
    port = static_cast<unsigned short>(value);
    return true;
}

boost::system::error_code bad_reply(std::string& why, std::string what) {
    why = "CLUSTER SLOTS: " + std::move(what);
    return error::unexpected_reply;
}

}  // namespace

slot_map::slot_map() : owner_(cluster_slots, -1) {}

std::optional<std::size_t> slot_map::master_of(std::uint16_t slot) const noexcept {
    if (slot >= owner_.size() || owner_[slot] < 0) return std::nullopt;
    return static_cast<std::size_t>(owner_[slot]);
}

std::size_t slot_map::unserved() const noexcept {
    std::size_t n = 0;
    for (const auto o : owner_)
        n += o < 0 ? 1 : 0;
    return n;
}

bool slot_map::has_master(const node_address& address) const noexcept {
    for (std::size_t i = 0; i < masters_.size(); ++i) {
        if (masters_[i].host != address.host || masters_[i].port != address.port) continue;
        for (const auto o : owner_)
            if (o == static_cast<std::int32_t>(i)) return true;
        return false;
    }
    return false;
}

std::size_t slot_map::master_at(const node_address& address) {
    for (std::size_t i = 0; i < masters_.size(); ++i)
        if (masters_[i].host == address.host && masters_[i].port == address.port) return i;
    masters_.push_back(address);
    return masters_.size() - 1;
}

void slot_map::assign(std::uint16_t first, std::uint16_t last, const node_address& address) {
    const auto index = static_cast<std::int32_t>(master_at(address));
    for (std::size_t s = first; s <= last && s < owner_.size(); ++s)
        owner_[s] = index;
}

std::vector<node_address> master_reference::on_map(const slot_map& next, const slot_map& current) {
    std::vector<node_address> fresh;
    if (!first_) {
        for (const auto& m : next.masters())
            if (next.has_master(m) && !knows(m, current)) fresh.push_back(m);
    }
    if (first_ || next.unserved() <= unserved_) {
        masters_.clear();
        for (const auto& m : next.masters())
            if (next.has_master(m)) masters_.push_back(m);
        unserved_ = next.unserved();
    }
    first_ = false;
    return fresh;
}

bool master_reference::knows(const node_address& address, const slot_map& current) const {
    if (current.has_master(address)) return true;
    for (const auto& m : masters_)
        if (m.host == address.host && m.port == address.port) return true;
    return false;
}

boost::system::error_code read_cluster_slots(const resp::value& reply, const node_address& asked,
                                             slot_map& out, std::string& why, const address_map& remap) {
    out = slot_map{};
    if (reply.is_error()) return bad_reply(why, reply.str);
    if (reply.kind != resp::type::array) return bad_reply(why, "expected an array");
    for (const auto& range : reply.elements) {
        // [first slot, last slot, [host, port, id, ...] of the master, replicas...]
        if (range.kind != resp::type::array || range.elements.size() < 3) {
            return bad_reply(why, "expected [first, last, master, replicas...] for each range");
        }
        const auto& first = range.elements[0];
        const auto& last = range.elements[1];
        const auto& master = range.elements[2];
        if (first.kind != resp::type::integer || last.kind != resp::type::integer || first.integer < 0 ||
            last.integer < first.integer || last.integer >= cluster_slots) {
            return bad_reply(why, "a slot range outside 0-16383");
        }
        if (master.kind != resp::type::array || master.elements.size() < 2 ||
            master.elements[1].kind != resp::type::integer || master.elements[1].integer <= 0 ||
            master.elements[1].integer > 65535 || !master.elements[0].is_string()) {
            return bad_reply(why, "expected [host, port, ...] for the master of slots " +
                                      std::to_string(first.integer) + "-" + std::to_string(last.integer));
        }
        node_address address = asked;
        const auto& host = master.elements[0].str;
        if (!host.empty() && host != "?") address.host = host;
        address.port = static_cast<unsigned short>(master.elements[1].integer);
        out.assign(static_cast<std::uint16_t>(first.integer), static_cast<std::uint16_t>(last.integer),
                   remap.apply(std::move(address)));
    }
    return {};
}

std::optional<redirect> read_redirect(const resp::value& reply) {
    if (!reply.is_error()) return std::nullopt;
    const auto code = reply.error_code();
    if (code != "MOVED" && code != "ASK") return std::nullopt;
    // "MOVED <slot> <host>:<port>"; the host may be empty (the node that answered), or an IPv6
    // address, whose last ':' is the port's.
    std::string_view text = reply.str;
    text.remove_prefix(code.size());
    if (text.empty() || text.front() != ' ') return std::nullopt;
    text.remove_prefix(1);
    const auto space = text.find(' ');
    if (space == std::string_view::npos) return std::nullopt;
    redirect r;
    r.ask = code == "ASK";
    unsigned slot = 0;
    const auto slot_text = text.substr(0, space);
    const auto parsed = std::from_chars(slot_text.data(), slot_text.data() + slot_text.size(), slot);
    if (parsed.ec != std::errc{} || parsed.ptr != slot_text.data() + slot_text.size() ||
        slot >= cluster_slots)
        return std::nullopt;
    r.slot = static_cast<std::uint16_t>(slot);
    const auto endpoint = text.substr(space + 1);
    const auto colon = endpoint.rfind(':');
    if (colon == std::string_view::npos || !read_port(endpoint.substr(colon + 1), r.port))
        return std::nullopt;
    auto host = endpoint.substr(0, colon);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    if (host != "?") r.host = std::string(host);
    return r;
}

std::optional<resp::request> asking_before_each(std::string_view payload) {
    resp::request out;
    resp::reply_parser parser;
    std::vector<std::string_view> args;
    while (!payload.empty()) {
        payload.remove_prefix(parser.feed(payload));
        if (parser.error() || !parser.done()) return std::nullopt;
        const auto command = parser.take();
        if (command.kind != resp::type::array || command.elements.empty()) return std::nullopt;
        args.clear();
        for (std::size_t i = 1; i < command.elements.size(); ++i)
            args.push_back(command.elements[i].str);
        out.push("ASKING");
        out.push_range(command.elements.front().str, args);
    }
    return out;
}

}  // namespace redlock::redis::detail
