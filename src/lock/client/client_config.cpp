// SPDX-License-Identifier: BSL-1.0
#include "lock/client/config_json.hpp"
#include "redis/address_map.hpp"
#include <redlock/config.hpp>
#include <redlock/error.hpp>
#include <redlock/redis/node_address.hpp>
#include <redlock/redis/node_spec.hpp>

#include <boost/asio/ip/address.hpp>
#include <boost/system/errc.hpp>
#include <boost/system/system_error.hpp>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <exception>
#include <fstream>
#include <functional>
#include <new>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

namespace redlock {
namespace {

using boost::system::error_code;
using std::chrono::milliseconds;

error_code fail(std::string& why, std::string_view text, error code = error::invalid_config) {
    return detail::config_error(why, text, code);
}

// Assigns without letting an allocation failure escape a non-throwing function.
void set_why(std::string& why, const char* text) noexcept {
    try {
        why = text;
    } catch (...) {
        why.clear();
    }
}

// What makes two entries the same server, i.e. the same voter. Credentials do not change the
// server. Neither does the database: keys in db 0 and db 1 of one server still live and die with
// that one process, so it would grant two votes and a single crash would take both. TLS and
// plain TCP on the same host:port cannot both be that server's listener, so the transport is
// left out as well. Host names compare case-insensitively and IP literals in canonical form
// ("0:0::1" is "::1"); "localhost" against "127.0.0.1" would need a resolver and is not caught.
struct node_identity {
    bool is_unix = false;
    std::string host_or_path;
    unsigned short port = 0;
    // Sentinel: one set of sentinels may watch several masters, each a voter of its own.
    std::string master_name;

    friend bool operator==(const node_identity&, const node_identity&) = default;
};

node_identity identity_of(const redis::node_address& a) {
    if (a.kind == redis::node_address::transport::unix_socket) return {true, a.path, 0, {}};
    std::string host = a.host;
    for (char& c : host) {
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
    error_code ec;
    auto ip = boost::asio::ip::make_address(host, ec);
    if (!ec) host = ip.to_string();
    return {false, std::move(host), a.port, {}};
}

error_code check_millis(milliseconds value, std::string_view path, bool allow_zero, std::string& why) {
    const std::int64_t n = value.count();
    if (n < 0 || (n == 0 && !allow_zero)) {
        return fail(why, std::string(path) +
                             (allow_zero ? ": must not be negative, got " : ": must be positive, got ") +
                             std::to_string(n) + " ms");
    }
    if (n > detail::max_config_millis) {
        return fail(why, std::string(path) + ": " + std::to_string(n) + " ms is out of range (at most " +
                             std::to_string(detail::max_config_millis) + " ms)");
    }
    return {};
}

client_config parse_json(std::string_view text, error_code& ec, std::string& why) {
    client_config config;
    ec = detail::read_config_json(text, config, why);
    if (!ec) ec = config.validate(why);
    if (ec) return {};
    return config;
}

client_config read_file(const std::string& path, error_code& ec, std::string& why) {
    errno = 0;
    std::ifstream in(path, std::ios::binary);
    std::string text;
    if (in) {
        // istream::read rather than istreambuf_iterator: libstdc++'s filebuf throws on a read
        // error (EISDIR for a directory), and only the istream members turn that into badbit.
        char chunk[16384];
        while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
            text.append(chunk, static_cast<std::size_t>(in.gcount()));
        }
    }
    if (!in.is_open() || in.bad()) {
        const int err = errno;
        ec = error::invalid_config;
        why = "client_config: cannot read " + path + ": " +
              (err != 0 ? std::generic_category().message(err) : std::string("read error"));
        return {};
    }
    client_config config = parse_json(text, ec, why);
    // The parse messages name the key; with several config files around, name the file too.
    if (ec) why += " (in " + path + ")";
    return config;
}

// The non-throwing overloads promise not to throw; an allocation failure becomes an error code,
// and anything else (a nlohmann exception the checks above should have made impossible) is a bug.
template <class Function>
client_config without_exceptions(error_code& ec, std::string& why, Function&& f) noexcept {
    try {
        return std::forward<Function>(f)();
    } catch (const std::bad_alloc&) {
        ec = boost::system::errc::make_error_code(boost::system::errc::not_enough_memory);
        set_why(why, "client_config: out of memory");
    } catch (const std::exception&) {
        ec = error::internal;
        set_why(why, "client_config: internal error while parsing the config");
    }
    // A default client_config allocates nothing (short strings, empty vector).
    return {};
}

}  // namespace

client_config client_config::from_json(std::string_view text) {
    error_code ec;
    std::string why;
    client_config config = parse_json(text, ec, why);
    if (ec) throw boost::system::system_error(ec, why);
    return config;
}

client_config client_config::from_json(std::string_view text, error_code& ec, std::string& why) {
    ec = {};
    return without_exceptions(ec, why, [&] { return parse_json(text, ec, why); });
}

client_config client_config::from_file(const std::string& path) {
    error_code ec;
    std::string why;
    client_config config = read_file(path, ec, why);
    if (ec) throw boost::system::system_error(ec, why);
    return config;
}

client_config client_config::from_file(const std::string& path, error_code& ec, std::string& why) {
    ec = {};
    return without_exceptions(ec, why, [&] { return read_file(path, ec, why); });
}

namespace {

// What the JSON object form of a node added (client_config::per_node).
error_code check_per_node(const client_config& cfg, std::string& why) {
    const auto& nodes = cfg.nodes;
    const auto& per_node = cfg.per_node;
    if (!per_node.empty() && per_node.size() != nodes.size()) {
        return fail(why, "per_node: " + std::to_string(per_node.size()) + " entries for " +
                             std::to_string(nodes.size()) + " nodes (none, or one per node)");
    }
    for (std::size_t i = 0; i < per_node.size(); ++i) {
        const auto& extra = per_node[i];
        const auto path = "nodes[" + std::to_string(i) + "]";
        redis::node_spec spec;
        std::string ignored;
        const bool sentinel = !redis::parse_node_spec(nodes[i], spec, ignored) &&
                              spec.kind == redis::node_spec::topology::sentinel;
        if (!sentinel && !(extra.sentinel_username.empty() && extra.sentinel_password.empty()))
            return fail(
                why,
                path +
                    ": sentinel credentials for a node that is not redis-sentinel:// or rediss-sentinel://");
        if (extra.tls && extra.tls->cert_file.empty() != extra.tls->key_file.empty())
            return fail(
                why, path + ".tls: cert_file and key_file go together (a client certificate needs its key)");
    }
    return {};
}

}  // namespace

error_code client_config::validate(std::string& why) const {
    if (nodes.empty()) return fail(why, "nodes: at least one node is required");
    // Every server (or seed) any node names, with the node that names it.
    std::vector<std::pair<node_identity, std::size_t>> seen;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        redis::node_spec spec;
        std::string uri_why;
        if (redis::parse_node_spec(nodes[i], spec, uri_why)) {
            return fail(why, "nodes[" + std::to_string(i) + "]: " + uri_why, error::invalid_uri);
        }
        for (const auto& address : spec.addresses) {
            node_identity id = identity_of(address);
            id.master_name = spec.master_name;
            for (const auto& [other, j] : seen) {
                if (other != id) continue;
                if (j == i) break;  // a cluster URI refuses its own repeated seeds
                const auto shared = spec.kind == redis::node_spec::topology::server
                                        ? std::string()
                                        : " (both name " + address.to_string() + ")";
                return fail(why, "nodes[" + std::to_string(i) + "] is the same node as nodes[" +
                                     std::to_string(j) + "]" + shared + ": it would vote twice");
            }
            seen.emplace_back(std::move(id), i);
        }
    }
    if (auto ec = check_millis(max_ttl, "max_ttl_ms", false, why)) return ec;
    // Written so that NaN fails too.
    if (!(drift_factor >= 0.0 && drift_factor < 0.5)) {
        return fail(why, "drift_factor: expected a number in [0, 0.5), got " +
                             detail::format_config_double(drift_factor));
    }
    if (auto ec = check_millis(node_timeout, "node_timeout_ms", false, why)) return ec;
    if (auto ec = check_millis(connect_timeout, "connect_timeout_ms", false, why)) return ec;
    if (auto ec = check_millis(health_check_interval, "health_check_interval_ms", true, why)) return ec;
    // Redis refuses CLIENT SETNAME with anything outside '!'..'~'; caught here, it is one clear
    // message at startup instead of a handshake_failed on every connection.
    for (char c : client_name) {
        if (c < '!' || c > '~') {
            return fail(why, "client_name: \"" + client_name +
                                 "\" contains a space, control or non-ASCII character, which Redis refuses");
        }
    }
    if (auto ec = check_millis(retry.min_delay, "retry.min_delay_ms", true, why)) return ec;
    if (auto ec = check_millis(retry.max_delay, "retry.max_delay_ms", true, why)) return ec;
    if (retry.min_delay > retry.max_delay) {
        return fail(why, "retry: min_delay_ms (" + std::to_string(retry.min_delay.count()) +
                             ") is greater than max_delay_ms (" + std::to_string(retry.max_delay.count()) +
                             ")");
    }
    if (tls.cert_file.empty() != tls.key_file.empty()) {
        return fail(why, "tls: cert_file and key_file go together (a client certificate needs its key)");
    }
    redis::detail::address_map remap;
    if (auto ec = redis::detail::address_map::parse(address_map, remap, why)) return ec;
    return check_per_node(*this, why);
}

std::vector<redis::node_spec> client_config::node_specs() const {
    std::vector<redis::node_spec> specs;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        redis::node_spec spec;
        std::string why;
        if (auto ec = redis::parse_node_spec(nodes[i], spec, why)) throw boost::system::system_error(ec, why);
        if (i < per_node.size()) {
            spec.sentinel_username = per_node[i].sentinel_username;
            spec.sentinel_password = per_node[i].sentinel_password;
        }
        if (spec.kind != redis::node_spec::topology::server) spec.address_map = address_map;
        specs.push_back(std::move(spec));
    }
    return specs;
}

}  // namespace redlock
