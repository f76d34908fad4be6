// SPDX-License-Identifier: BSL-1.0
#include "lock/client/config_json.hpp"

#include <redlock/error.hpp>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::detail {
namespace {

using json_value = nlohmann::json;
using boost::system::error_code;
using std::chrono::milliseconds;

error_code fail(std::string& why, std::string_view text) {
    return config_error(why, text);
}

// "what was found" in type errors: the JSON type, or the number itself, which says more than
// "number" (1.5 for an integer field, -3 for a non-negative one).
std::string describe(const json_value& v) {
    if (v.is_number()) return v.dump();
    return v.type_name();
}

std::string join_path(std::string_view prefix, std::string_view key) {
    std::string path(prefix);
    if (!path.empty()) path += '.';
    path += key;
    return path;
}

// nlohmann::json keeps the last of two equal keys without a word. In a config file that is most
// likely a merge or copy-paste mistake, and silently using the second value would hide it, so
// the parse callback records the path of the first repeated key.
class duplicate_key_finder {
public:
    bool on_event(json_value::parse_event_t event, const json_value& parsed) {
        using event_t = json_value::parse_event_t;
        switch (event) {
            case event_t::object_start:
                stack_.push_back(frame{false, 0, {}, {}});
                break;
            case event_t::array_start:
                stack_.push_back(frame{true, 0, {}, {}});
                break;
            case event_t::key:
                if (!stack_.empty() && parsed.is_string()) {
                    frame& top = stack_.back();
                    top.key = parsed.get_ref<const std::string&>();
                    if (!top.keys.insert(top.key).second && duplicate_.empty()) duplicate_ = path();
                }
                break;
            case event_t::value:
                next_element();
                break;
            case event_t::object_end:
            case event_t::array_end:
                if (!stack_.empty()) stack_.pop_back();
                next_element();
                break;
        }
        // Keep every value: the finder only watches, the config checks come after the parse.
        return true;
    }

    [[nodiscard]] const std::string& duplicate() const { return duplicate_; }

private:
    struct frame {
        bool is_array;
        std::size_t index;
        std::string key;
        std::set<std::string> keys;
    };

    void next_element() {
        if (!stack_.empty() && stack_.back().is_array) ++stack_.back().index;
    }

    // The path of the current key, in the form the rest of the messages use: "retry.foo",
    // "nodes[2].x".
    [[nodiscard]] std::string path() const {
        std::string out;
        for (const frame& f : stack_) {
            if (f.is_array) {
                out += '[' + std::to_string(f.index) + ']';
            } else {
                if (!out.empty()) out += '.';
                out += f.key;
            }
        }
        return out;
    }

    std::vector<frame> stack_;
    std::string duplicate_;
};

// nlohmann's what() reads "[json.exception.parse_error.101] parse error at line 1, column 25:
// syntax error ...". The bracketed id means nothing to a user; the byte offset helps with tools
// that work in offsets. Gives "line 1, column 25 (byte 25): syntax error ...".
std::string describe_parse_error(const json_value::parse_error& e) {
    std::string_view what = e.what();
    if (auto close = what.find("] "); close != std::string_view::npos) what.remove_prefix(close + 2);
    constexpr std::string_view lead = "parse error at ";
    if (what.substr(0, lead.size()) == lead) what.remove_prefix(lead.size());
    const std::string byte = "byte " + std::to_string(e.byte);
    auto colon = what.find(": ");
    if (colon == std::string_view::npos || what.substr(0, 5) != "line ") {
        return byte + ": " + std::string(what);
    }
    return std::string(what.substr(0, colon)) + " (" + byte + ")" + std::string(what.substr(colon));
}

// Parses without exceptions; only when that fails, parses again with them to get nlohmann's
// description of the problem, which the non-throwing parse does not expose.
error_code parse_document(std::string_view text, json_value& out, std::string& why) {
    duplicate_key_finder finder;
    json_value::parser_callback_t callback = [&finder](int, json_value::parse_event_t event,
                                                       json_value& parsed) {
        return finder.on_event(event, parsed);
    };
    out = json_value::parse(text.begin(), text.end(), callback, false);
    if (out.is_discarded()) {
        std::string detail = "syntax error";
        try {
            [[maybe_unused]] json_value again = json_value::parse(text.begin(), text.end());
        } catch (const json_value::parse_error& e) {
            detail = describe_parse_error(e);
        }
        return fail(why, "not valid JSON: " + detail);
    }
    if (!finder.duplicate().empty()) return fail(why, "duplicate key \"" + finder.duplicate() + "\"");
    return {};
}

// Every key of `object` must be one of `known`; the message lists them, since a typo
// ("max_ttl" for "max_ttl_ms") is the usual cause.
error_code check_keys(const json_value& object, std::string_view prefix,
                      std::initializer_list<std::string_view> known, std::string& why) {
    for (const auto& [key, value] : object.items()) {
        bool found = false;
        for (std::string_view k : known)
            found = found || k == key;
        if (found) continue;
        std::string text = "unknown key \"" + join_path(prefix, key) + "\" (expected one of: ";
        for (const std::string_view& k : known) {
            if (&k != known.begin()) text += ", ";
            text += k;
        }
        text += ')';
        return fail(why, text);
    }
    return {};
}

const json_value* find(const json_value& object, const char* key) {
    auto it = object.find(key);
    return it == object.end() ? nullptr : &*it;
}

error_code read_string(const json_value& v, const std::string& path, std::string& out, std::string& why) {
    if (!v.is_string()) return fail(why, path + ": expected a string, got " + describe(v));
    out = v.get<std::string>();
    return {};
}

error_code read_bool(const json_value& v, const std::string& path, bool& out, std::string& why) {
    if (!v.is_boolean()) return fail(why, path + ": expected true or false, got " + describe(v));
    out = v.get<bool>();
    return {};
}

// An integer number of milliseconds in [minimum, max_config_millis]. Floats are refused even when
// integral (1.0, 1e3): a fractional millisecond cannot be honoured, and accepting some floats
// but not others would be harder to explain. Booleans are not numbers for nlohmann::json.
error_code read_millis(const json_value& v, const std::string& path, std::int64_t minimum, milliseconds& out,
                       std::string& why) {
    const std::string expected = path + (minimum > 0 ? ": expected a positive integer, got "
                                                     : ": expected a non-negative integer, got ");
    auto out_of_range = [&] {
        return fail(why, path + ": " + describe(v) + " is out of range (at most " +
                             std::to_string(max_config_millis) + " ms)");
    };
    std::int64_t n = 0;
    if (v.is_number_unsigned()) {
        auto u = v.get<std::uint64_t>();
        if (u > static_cast<std::uint64_t>(max_config_millis)) return out_of_range();
        n = static_cast<std::int64_t>(u);
    } else if (v.is_number_integer()) {
        n = v.get<std::int64_t>();
    } else if (v.is_number_float()) {
        // Integer literals beyond 64 bits arrive as doubles; call them what they are.
        double d = v.get<double>();
        if (d == std::trunc(d) && d > static_cast<double>(max_config_millis)) return out_of_range();
        return fail(why, expected + describe(v));
    } else {
        return fail(why, expected + describe(v));
    }
    if (n < minimum) return fail(why, expected + describe(v));
    out = milliseconds{n};
    return {};
}

// A count: a non-negative integer (no floats, as for read_millis).
error_code read_count(const json_value& v, const std::string& path, std::size_t& out, std::string& why) {
    if (v.is_number_unsigned()) {
        out = static_cast<std::size_t>(v.get<std::uint64_t>());
        return {};
    }
    if (v.is_number_integer() && v.get<std::int64_t>() >= 0) {
        out = static_cast<std::size_t>(v.get<std::int64_t>());
        return {};
    }
    return fail(why, path + ": expected a non-negative integer, got " + describe(v));
}

error_code read_tls(const json_value& v, const std::string& path, tls_config& out, std::string& why);

// A node is its URI, or an object with the URI and what the URI cannot say.
error_code read_node(const json_value& node, const std::string& path, std::string& uri, node_settings& extra,
                     std::string& why) {
    if (node.is_string()) {
        uri = node.get<std::string>();
        return {};
    }
    if (!node.is_object())
        return fail(why, path + ": expected a URI string or an object, got " + describe(node));
    if (auto ec = check_keys(node, path, {"uri", "sentinel_username", "sentinel_password", "tls"}, why))
        return ec;
    const json_value* u = find(node, "uri");
    if (u == nullptr) return fail(why, path + ".uri: required key is missing");
    if (auto ec = read_string(*u, path + ".uri", uri, why)) return ec;
    if (auto* f = find(node, "sentinel_username")) {
        if (auto ec = read_string(*f, path + ".sentinel_username", extra.sentinel_username, why)) return ec;
    }
    if (auto* f = find(node, "sentinel_password")) {
        if (auto ec = read_string(*f, path + ".sentinel_password", extra.sentinel_password, why)) return ec;
    }
    if (auto* f = find(node, "tls")) {
        extra.tls.emplace();
        if (auto ec = read_tls(*f, path + ".tls", *extra.tls, why)) return ec;
    }
    return {};
}

error_code read_nodes(const json_value& v, client_config& out, std::string& why) {
    if (!v.is_array()) return fail(why, "nodes: expected an array of URI strings, got " + describe(v));
    out.nodes.assign(v.size(), std::string());
    std::vector<node_settings> extras(v.size());
    bool any_object = false;
    for (std::size_t i = 0; i < v.size(); ++i) {
        any_object = any_object || v[i].is_object();
        if (auto ec = read_node(v[i], "nodes[" + std::to_string(i) + "]", out.nodes[i], extras[i], why))
            return ec;
    }
    if (any_object) out.per_node = std::move(extras);
    return {};
}

error_code read_retry(const json_value& v, retry_config& out, std::string& why) {
    if (!v.is_object()) return fail(why, "retry: expected an object, got " + describe(v));
    if (auto ec = check_keys(v, "retry", {"min_delay_ms", "max_delay_ms"}, why)) return ec;
    if (auto* f = find(v, "min_delay_ms")) {
        if (auto ec = read_millis(*f, "retry.min_delay_ms", 0, out.min_delay, why)) return ec;
    }
    if (auto* f = find(v, "max_delay_ms")) {
        if (auto ec = read_millis(*f, "retry.max_delay_ms", 0, out.max_delay, why)) return ec;
    }
    return {};
}

error_code read_tls(const json_value& v, const std::string& path, tls_config& out, std::string& why) {
    if (!v.is_object()) return fail(why, path + ": expected an object, got " + describe(v));
    if (auto ec = check_keys(v, path, {"ca_file", "cert_file", "key_file", "server_name", "verify"}, why))
        return ec;
    if (auto* f = find(v, "ca_file")) {
        if (auto ec = read_string(*f, path + ".ca_file", out.ca_file, why)) return ec;
    }
    if (auto* f = find(v, "cert_file")) {
        if (auto ec = read_string(*f, path + ".cert_file", out.cert_file, why)) return ec;
    }
    if (auto* f = find(v, "key_file")) {
        if (auto ec = read_string(*f, path + ".key_file", out.key_file, why)) return ec;
    }
    if (auto* f = find(v, "server_name")) {
        if (auto ec = read_string(*f, path + ".server_name", out.server_name, why)) return ec;
    }
    if (auto* f = find(v, "verify")) {
        if (auto ec = read_bool(*f, path + ".verify", out.verify, why)) return ec;
    }
    return {};
}

// Type checks and conversions only; the ranges and the node URIs are left to validate(), which
// hand-built configs go through too.
error_code read_config(const json_value& doc, client_config& out, std::string& why) {
    if (!doc.is_object()) return fail(why, "expected a JSON object at the top level, got " + describe(doc));
    if (auto ec = check_keys(
            doc, "",
            {"nodes", "key_prefix", "max_ttl_ms", "drift_factor", "node_timeout_ms", "connect_timeout_ms",
             "health_check_interval_ms", "client_name", "restart_quarantine", "failover_quarantine",
             "identify_holder", "max_queued_requests", "max_subscriptions", "retry", "tls", "address_map"},
            why)) {
        return ec;
    }
    const json_value* nodes = find(doc, "nodes");
    if (nodes == nullptr) return fail(why, "nodes: required key is missing");
    if (auto ec = read_nodes(*nodes, out, why)) return ec;
    if (auto* f = find(doc, "key_prefix")) {
        if (auto ec = read_string(*f, "key_prefix", out.key_prefix, why)) return ec;
    }
    if (auto* f = find(doc, "max_ttl_ms")) {
        if (auto ec = read_millis(*f, "max_ttl_ms", 1, out.max_ttl, why)) return ec;
    }
    if (auto* f = find(doc, "drift_factor")) {
        if (!f->is_number())
            return fail(why, "drift_factor: expected a number in [0, 0.5), got " + describe(*f));
        out.drift_factor = f->get<double>();
    }
    if (auto* f = find(doc, "node_timeout_ms")) {
        if (auto ec = read_millis(*f, "node_timeout_ms", 1, out.node_timeout, why)) return ec;
    }
    if (auto* f = find(doc, "connect_timeout_ms")) {
        if (auto ec = read_millis(*f, "connect_timeout_ms", 1, out.connect_timeout, why)) return ec;
    }
    if (auto* f = find(doc, "health_check_interval_ms")) {
        if (auto ec = read_millis(*f, "health_check_interval_ms", 0, out.health_check_interval, why))
            return ec;
    }
    if (auto* f = find(doc, "client_name")) {
        if (auto ec = read_string(*f, "client_name", out.client_name, why)) return ec;
    }
    if (auto* f = find(doc, "max_queued_requests")) {
        if (auto ec = read_count(*f, "max_queued_requests", out.max_queued_requests, why)) return ec;
    }
    if (auto* f = find(doc, "max_subscriptions")) {
        if (auto ec = read_count(*f, "max_subscriptions", out.max_subscriptions, why)) return ec;
    }
    if (auto* f = find(doc, "restart_quarantine")) {
        if (auto ec = read_bool(*f, "restart_quarantine", out.restart_quarantine, why)) return ec;
    }
    if (auto* f = find(doc, "identify_holder")) {
        if (auto ec = read_bool(*f, "identify_holder", out.identify_holder, why)) return ec;
    }
    if (auto* f = find(doc, "failover_quarantine")) {
        if (auto ec = read_bool(*f, "failover_quarantine", out.failover_quarantine, why)) return ec;
    }
    if (auto* f = find(doc, "retry")) {
        if (auto ec = read_retry(*f, out.retry, why)) return ec;
    }
    if (auto* f = find(doc, "address_map")) {
        if (!f->is_object())
            return fail(why, "address_map: expected an object of \"from\": \"to\", got " + describe(*f));
        for (const auto& [from, to] : f->items()) {
            if (auto ec = read_string(to, "address_map." + from, out.address_map[from], why)) return ec;
        }
    }
    if (auto* f = find(doc, "tls")) {
        if (auto ec = read_tls(*f, "tls", out.tls, why)) return ec;
    }
    return {};
}

}  // namespace

error_code config_error(std::string& why, std::string_view text, error code) {
    why = "client_config: ";
    why += text;
    return code;
}

std::string format_config_double(double d) {
    // JSON has no NaN or infinity, and nlohmann::json dumps them as "null"; a hand-built
    // config may hold them.
    if (std::isnan(d)) return "NaN";
    if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
    return json_value(d).dump();
}

error_code read_config_json(std::string_view text, client_config& out, std::string& why) {
    json_value doc;
    if (auto ec = parse_document(text, doc, why)) return ec;
    return read_config(doc, out, why);
}

}  // namespace redlock::detail
