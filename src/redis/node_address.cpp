// SPDX-License-Identifier: BSL-1.0
#include <redlock/error.hpp>
#include <redlock/redis/node_address.hpp>

#include <charconv>
#include <optional>

namespace redlock::redis {
namespace {

int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

std::optional<std::string> percent_decode(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] != '%') {
            out.push_back(s[i]);
            continue;
        }
        if (i + 2 >= s.size()) return std::nullopt;
        int hi = hex_digit(s[i + 1]), lo = hex_digit(s[i + 2]);
        if (hi < 0 || lo < 0) return std::nullopt;
        out.push_back(static_cast<char>(hi * 16 + lo));
        i += 2;
    }
    return out;
}

template <class Int>
bool parse_decimal(std::string_view s, Int& out) {
    if (s.empty()) return false;
    for (char c : s)
        if (c < '0' || c > '9') return false;
    auto r = std::from_chars(s.data(), s.data() + s.size(), out);
    return r.ec == std::errc{} && r.ptr == s.data() + s.size();
}

// Masks the password of a URI for messages: everything between the scheme's "//" and '@' after
// the first ':' becomes "***".
std::string masked(std::string_view uri) {
    auto scheme_end = uri.find("://");
    auto at = uri.rfind('@');
    if (scheme_end == std::string_view::npos || at == std::string_view::npos || at < scheme_end) {
        return std::string(uri);
    }
    auto colon = uri.find(':', scheme_end + 3);
    if (colon == std::string_view::npos || colon > at) return std::string(uri);
    return std::string(uri.substr(0, colon + 1)) + "***" + std::string(uri.substr(at));
}

boost::system::error_code fail(std::string_view uri, std::string& why, std::string_view what) {
    why = "invalid node URI '" + masked(uri) + "': " + std::string(what);
    return error::invalid_uri;
}

}  // namespace

// Appended piece by piece: g++ 12 at -O3 warns (-Wrestrict, a false positive inside
// std::string) on `literal + std::string` chains here.
std::string node_address::to_string() const {
    std::string out = kind == transport::unix_socket ? "unix://"
                      : kind == transport::tls       ? "rediss://"
                                                     : "redis://";
    if (!username.empty() || !password.empty()) {
        out += username;
        if (!password.empty()) out += ":***";
        out += '@';
    }
    if (kind == transport::unix_socket) {
        out += path;
        if (db != 0) {
            out += "?db=";
            out += std::to_string(db);
        }
        return out;
    }
    const bool ipv6 = host.find(':') != std::string::npos;
    if (ipv6) out += '[';
    out += host;
    if (ipv6) out += ']';
    out += ':';
    out += std::to_string(port);
    if (db != 0) {
        out += '/';
        out += std::to_string(db);
    }
    return out;
}

boost::system::error_code parse_node_uri(std::string_view uri, node_address& out, std::string& why) {
    out = node_address{};
    auto scheme_end = uri.find("://");
    if (scheme_end == std::string_view::npos) {
        return fail(uri, why, "expected redis://, rediss:// or unix://");
    }
    std::string_view scheme = uri.substr(0, scheme_end);
    std::string_view rest = uri.substr(scheme_end + 3);
    if (scheme == "redis") {
        out.kind = node_address::transport::tcp;
    } else if (scheme == "rediss") {
        out.kind = node_address::transport::tls;
    } else if (scheme == "unix") {
        out.kind = node_address::transport::unix_socket;
    } else if (scheme == "redis-cluster" || scheme == "rediss-cluster" || scheme == "redis-sentinel" ||
               scheme == "rediss-sentinel") {
        return fail(uri, why, "names a cluster or a Sentinel deployment, where one server is expected");
    } else {
        return fail(uri, why,
                    "unknown scheme '" + std::string(scheme) + "' (expected redis, rediss or unix)");
    }

    // Credentials: everything up to the last '@' (a password may itself contain '@' only encoded,
    // but the last '@' is the unambiguous separator for a unix path that contains none).
    auto at = out.kind == node_address::transport::unix_socket ? rest.find("@/") : rest.rfind('@');
    if (at != std::string_view::npos) {
        std::string_view login = rest.substr(0, at);
        rest = rest.substr(at + 1);
        auto colon = login.find(':');
        if (colon == std::string_view::npos) {
            return fail(uri, why, "credentials need the form user:password@ or :password@");
        }
        auto user = percent_decode(login.substr(0, colon));
        auto pass = percent_decode(login.substr(colon + 1));
        if (!user || !pass) return fail(uri, why, "bad percent-encoding in the credentials");
        if (pass->empty()) return fail(uri, why, "empty password");
        out.username = std::move(*user);
        out.password = std::move(*pass);
    }

    if (out.kind == node_address::transport::unix_socket) {
        auto query = rest.find('?');
        std::string_view path = rest.substr(0, query);
        if (path.empty() || path.front() != '/') {
            return fail(uri, why, "a unix socket path must be absolute (unix:///path/to/redis.sock)");
        }
        out.path = std::string(path);
        if (query != std::string_view::npos) {
            std::string_view q = rest.substr(query + 1);
            if (q.substr(0, 3) != "db=" || !parse_decimal(q.substr(3), out.db)) {
                return fail(uri, why, "the only query parameter is db=<non-negative integer>");
            }
        }
        return {};
    }

    auto slash = rest.find('/');
    std::string_view authority = rest.substr(0, slash);
    if (slash != std::string_view::npos) {
        std::string_view db = rest.substr(slash + 1);
        if (!db.empty() && !parse_decimal(db, out.db)) {
            return fail(uri, why,
                        "the database must be a non-negative integer, got '" + std::string(db) + "'");
        }
    }
    std::string_view port_text;
    if (!authority.empty() && authority.front() == '[') {
        auto close = authority.find(']');
        if (close == std::string_view::npos) return fail(uri, why, "unterminated IPv6 literal");
        out.host = std::string(authority.substr(1, close - 1));
        std::string_view after = authority.substr(close + 1);
        if (!after.empty()) {
            if (after.front() != ':') return fail(uri, why, "unexpected text after the IPv6 literal");
            port_text = after.substr(1);
            if (port_text.empty()) return fail(uri, why, "empty port");
        }
    } else {
        auto colon = authority.find(':');
        out.host = std::string(authority.substr(0, colon));
        if (colon != std::string_view::npos) {
            port_text = authority.substr(colon + 1);
            if (port_text.empty()) return fail(uri, why, "empty port");
        }
    }
    if (out.host.empty()) return fail(uri, why, "missing host");
    if (!port_text.empty()) {
        unsigned long port = 0;
        if (!parse_decimal(port_text, port) || port == 0 || port > 65535) {
            return fail(uri, why, "the port must be 1-65535, got '" + std::string(port_text) + "'");
        }
        out.port = static_cast<unsigned short>(port);
    }
    return {};
}

}  // namespace redlock::redis
