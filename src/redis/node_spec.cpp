// SPDX-License-Identifier: BSL-1.0
#include <redlock/error.hpp>
#include <redlock/redis/node_spec.hpp>

namespace redlock::redis {
namespace {

// The password of a URI masked, as node_address::to_string() would: everything between the
// scheme's "//" and the last '@' after the first ':' becomes "***".
std::string masked(std::string_view uri) {
    const auto scheme_end = uri.find("://");
    const auto at = uri.rfind('@');
    if (scheme_end == std::string_view::npos || at == std::string_view::npos || at < scheme_end)
        return std::string(uri);
    const auto colon = uri.find(':', scheme_end + 3);
    if (colon == std::string_view::npos || colon > at) return std::string(uri);
    return std::string(uri.substr(0, colon + 1)) + "***" + std::string(uri.substr(at));
}

boost::system::error_code fail(std::string_view uri, std::string& why, std::string_view what) {
    why = "invalid node URI '" + masked(uri) + "': " + std::string(what);
    return error::invalid_uri;
}

// What parse_node_uri() said is wrong, without its "invalid node URI '...': " prefix, which
// names the one-server URI built here rather than the user's.
std::string_view problem_of(std::string_view why) {
    const auto cut = why.find("': ");
    return cut == std::string_view::npos ? why : why.substr(cut + 3);
}

void append_host(std::string& out, const node_address& a) {
    const bool ipv6 = a.host.find(':') != std::string::npos;
    if (ipv6) out += '[';
    out += a.host;
    if (ipv6) out += ']';
    out += ':';
    out += std::to_string(a.port);
}

}  // namespace

std::string node_spec::to_string() const {
    if (kind == topology::server) return addresses.empty() ? std::string() : addresses.front().to_string();
    const bool tls = !addresses.empty() && addresses.front().kind == node_address::transport::tls;
    std::string out = kind == topology::sentinel ? (tls ? "rediss-sentinel://" : "redis-sentinel://")
                      : tls                      ? "rediss-cluster://"
                                                 : "redis-cluster://";
    if (!addresses.empty()) {
        const auto& first = addresses.front();
        if (!first.username.empty() || !first.password.empty()) {
            out += first.username;
            if (!first.password.empty()) out += ":***";
            out += '@';
        }
    }
    for (std::size_t i = 0; i < addresses.size(); ++i) {
        if (i != 0) out += ',';
        append_host(out, addresses[i]);
    }
    if (kind == topology::sentinel) {
        if (!addresses.empty() && addresses.front().db != 0) {
            out += '/';
            out += std::to_string(addresses.front().db);
        }
        out += '#';
        out += master_name;
    }
    return out;
}

boost::system::error_code parse_node_spec(std::string_view uri, node_spec& out, std::string& why) {
    out = node_spec{};
    const auto scheme_end = uri.find("://");
    const auto scheme = scheme_end == std::string_view::npos ? std::string_view() : uri.substr(0, scheme_end);
    const bool cluster = scheme == "redis-cluster" || scheme == "rediss-cluster";
    const bool sentinel = scheme == "redis-sentinel" || scheme == "rediss-sentinel";
    if (!cluster && !sentinel) {
        node_address one;
        if (auto ec = parse_node_uri(uri, one, why)) return ec;
        out.addresses.push_back(std::move(one));
        return {};
    }
    out.kind = cluster ? node_spec::topology::cluster : node_spec::topology::sentinel;
    std::string_view rest = uri.substr(scheme_end + 3);

    if (sentinel) {
        const auto hash = rest.find('#');
        if (hash == std::string_view::npos || hash + 1 == rest.size())
            return fail(uri, why, "a Sentinel URI ends with #<master name>");
        out.master_name = std::string(rest.substr(hash + 1));
        rest = rest.substr(0, hash);
    } else if (rest.find('#') != std::string_view::npos) {
        return fail(uri, why, "a cluster URI has no #fragment (that is the Sentinel form's master name)");
    }

    // The credentials end at the last '@'; the hosts after them are separated by commas.
    std::string login;
    if (const auto at = rest.rfind('@'); at != std::string_view::npos) {
        login = std::string(rest.substr(0, at + 1));
        rest = rest.substr(at + 1);
    }
    std::string db;
    if (const auto slash = rest.find('/'); slash != std::string_view::npos) {
        db = std::string(rest.substr(slash));
        rest = rest.substr(0, slash);
        if (cluster && db != "/" && db != "/0")
            return fail(uri, why, "a cluster has only database 0, got '" + db.substr(1) + "'");
    }
    if (rest.empty()) return fail(uri, why, "no host:port");
    const bool tls = scheme == "rediss-cluster" || scheme == "rediss-sentinel";
    const std::string single_scheme = tls ? "rediss://" : "redis://";
    for (std::size_t begin = 0; begin <= rest.size();) {
        const auto comma = std::min(rest.find(',', begin), rest.size());
        const auto host = rest.substr(begin, comma - begin);
        const auto index = std::to_string(out.addresses.size() + 1);
        if (host.empty()) return fail(uri, why, "host " + index + " is empty");
        // The port is not optional here: the default 6379 is rarely what a list of seeds means.
        const auto close = host.front() == '[' ? host.find(']') : 0;
        if (close == std::string_view::npos || host.find(':', close) == std::string_view::npos)
            return fail(uri, why, "host " + index + " ('" + std::string(host) + "') needs a port");
        node_address a;
        std::string inner_why;
        if (parse_node_uri(single_scheme + login + std::string(host) + db, a, inner_why))
            return fail(uri, why, "host " + index + ": " + std::string(problem_of(inner_why)));
        for (std::size_t j = 0; j < out.addresses.size(); ++j) {
            if (out.addresses[j].host == a.host && out.addresses[j].port == a.port)
                return fail(uri, why, "host " + index + " is host " + std::to_string(j + 1) + " again");
        }
        out.addresses.push_back(std::move(a));
        begin = comma + 1;
    }
    return {};
}

std::vector<std::string> split_node_list(std::string_view text) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start <= text.size()) {
        auto comma = text.find(',', start);
        if (comma == std::string_view::npos) comma = text.size();
        const auto piece = text.substr(start, comma - start);
        start = comma + 1;
        if (piece.empty()) continue;
        const bool continues =
            piece.find("://") == std::string_view::npos && !out.empty() &&
            (out.back().starts_with("redis-cluster://") || out.back().starts_with("rediss-cluster://") ||
             out.back().starts_with("redis-sentinel://") || out.back().starts_with("rediss-sentinel://"));
        if (continues) {
            out.back() += ',';
            out.back() += piece;
        } else {
            out.emplace_back(piece);
        }
    }
    return out;
}

}  // namespace redlock::redis
