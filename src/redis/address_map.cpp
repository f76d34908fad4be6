// SPDX-License-Identifier: BSL-1.0
#include "redis/address_map.hpp"

#include <redlock/error.hpp>

#include <charconv>

namespace redlock::redis::detail {

namespace {

struct host_port {
    std::string host;
    std::optional<unsigned short> port;
};

// "host" or "host:port" (an IPv6 host in brackets: "[::1]:6379"); nothing if malformed.
std::optional<host_port> read_host_port(const std::string& text) {
    host_port out;
    std::string_view rest = text;
    std::string_view port_text;
    if (rest.starts_with('[')) {
        const auto close = rest.find(']');
        if (close == std::string_view::npos) return std::nullopt;
        out.host = std::string(rest.substr(1, close - 1));
        rest.remove_prefix(close + 1);
        if (!rest.empty()) {
            if (!rest.starts_with(':')) return std::nullopt;
            port_text = rest.substr(1);
        }
    } else {
        const auto colon = rest.rfind(':');
        if (colon != std::string_view::npos && rest.find(':') != colon) {
            out.host = text;  // a bare IPv6 address: no port
        } else {
            out.host = std::string(rest.substr(0, colon));
            if (colon != std::string_view::npos) port_text = rest.substr(colon + 1);
        }
    }
    if (out.host.empty() || out.host.find_first_of(" \t/") != std::string::npos) return std::nullopt;
    if (!port_text.empty() || (text.ends_with(':'))) {
        unsigned value = 0;
        const auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), value);
        if (ec != std::errc() || end != port_text.data() + port_text.size() || value == 0 || value > 65535)
            return std::nullopt;
        out.port = static_cast<unsigned short>(value);
    }
    return out;
}

}  // namespace

boost::system::error_code address_map::parse(const std::map<std::string, std::string>& entries,
                                             address_map& out, std::string& why) {
    out = address_map{};
    for (const auto& [from, to] : entries) {
        const auto source = read_host_port(from);
        const auto target = read_host_port(to);
        if (!source || !target) {
            why = "address_map: \"" + from + "\" -> \"" + to + "\": expected host or host:port on both sides";
            return error::invalid_config;
        }
        if (target->port && !source->port) {
            why = "address_map: \"" + from + "\" -> \"" + to +
                  "\": a port on the right needs one on the left (a host maps every port of it to the same)";
            return error::invalid_config;
        }
        if (source->port) {
            out.by_endpoint_[{source->host, *source->port}] = {target->host, target->port};
        } else {
            out.by_host_[source->host] = {target->host, std::nullopt};
        }
    }
    return {};
}

node_address address_map::apply(node_address a) const {
    if (empty()) return a;
    if (const auto it = by_endpoint_.find({a.host, a.port}); it != by_endpoint_.end()) {
        a.host = it->second.host;
        if (it->second.port) a.port = *it->second.port;
        return a;
    }
    if (const auto it = by_host_.find(a.host); it != by_host_.end()) a.host = it->second.host;
    return a;
}

}  // namespace redlock::redis::detail
