#include <redlock/config.hpp>
#include <redlock/error.hpp>
#include <redlock/redis/node_address.hpp>

#include <boost/asio/ip/address.hpp>
#include <boost/system/errc.hpp>
#include <boost/system/system_error.hpp>

#include <nlohmann/json.hpp>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <exception>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <new>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

namespace redlock {
namespace {

using json_value = nlohmann::json;
using boost::system::error_code;
using std::chrono::milliseconds;

// The timing code adds these durations to steady_clock time points and timers, which count
// nanoseconds in 64 bits: a value that does not fit there would overflow long before it could
// be useful, so it is a configuration error, not a very long timeout.
constexpr std::int64_t max_millis =
    std::chrono::duration_cast<milliseconds>(std::chrono::nanoseconds::max()).count();

error_code fail(std::string& why, std::string_view text, error code = error::invalid_config) {
    why = "client_config: ";
    why += text;
    return code;
}

// Assigns without letting an allocation failure escape a non-throwing function.
void set_why(std::string& why, const char* text) noexcept {
    try {
        why = text;
    } catch (...) {
        why.clear();
    }
}

// "what was found" in type errors: the JSON type, or the number itself, which says more than
// "number" (1.5 for an integer field, -3 for a non-negative one).
std::string describe(const json_value& v) {
    if (v.is_number()) return v.dump();
    return v.type_name();
}

// JSON has no NaN or infinity, and nlohmann::json dumps them as "null"; a hand-built config may
// hold them.
std::string format_double(double d) {
    if (std::isnan(d)) return "NaN";
    if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
    return json_value(d).dump();
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

// An integer number of milliseconds in [minimum, max_millis]. Floats are refused even when
// integral (1.0, 1e3): a fractional millisecond cannot be honoured, and accepting some floats
// but not others would be harder to explain. Booleans are not numbers for nlohmann::json.
error_code read_millis(const json_value& v, const std::string& path, std::int64_t minimum, milliseconds& out,
                       std::string& why) {
    const std::string expected = path + (minimum > 0 ? ": expected a positive integer, got "
                                                     : ": expected a non-negative integer, got ");
    auto out_of_range = [&] {
        return fail(why, path + ": " + describe(v) + " is out of range (at most " +
                             std::to_string(max_millis) + " ms)");
    };
    std::int64_t n = 0;
    if (v.is_number_unsigned()) {
        auto u = v.get<std::uint64_t>();
        if (u > static_cast<std::uint64_t>(max_millis)) return out_of_range();
        n = static_cast<std::int64_t>(u);
    } else if (v.is_number_integer()) {
        n = v.get<std::int64_t>();
    } else if (v.is_number_float()) {
        // Integer literals beyond 64 bits arrive as doubles; call them what they are.
        double d = v.get<double>();
        if (d == std::trunc(d) && d > static_cast<double>(max_millis)) return out_of_range();
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

error_code read_nodes(const json_value& v, std::vector<std::string>& out, std::string& why) {
    if (!v.is_array()) return fail(why, "nodes: expected an array of URI strings, got " + describe(v));
    out.clear();
    out.reserve(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) {
        const json_value& node = v[i];
        if (!node.is_string()) {
            return fail(why,
                        "nodes[" + std::to_string(i) + "]: expected a URI string, got " + describe(node));
        }
        out.push_back(node.get<std::string>());
    }
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

error_code read_tls(const json_value& v, tls_config& out, std::string& why) {
    if (!v.is_object()) return fail(why, "tls: expected an object, got " + describe(v));
    if (auto ec = check_keys(v, "tls", {"ca_file", "cert_file", "key_file", "server_name", "verify"}, why))
        return ec;
    if (auto* f = find(v, "ca_file")) {
        if (auto ec = read_string(*f, "tls.ca_file", out.ca_file, why)) return ec;
    }
    if (auto* f = find(v, "cert_file")) {
        if (auto ec = read_string(*f, "tls.cert_file", out.cert_file, why)) return ec;
    }
    if (auto* f = find(v, "key_file")) {
        if (auto ec = read_string(*f, "tls.key_file", out.key_file, why)) return ec;
    }
    if (auto* f = find(v, "server_name")) {
        if (auto ec = read_string(*f, "tls.server_name", out.server_name, why)) return ec;
    }
    if (auto* f = find(v, "verify")) {
        if (auto ec = read_bool(*f, "tls.verify", out.verify, why)) return ec;
    }
    return {};
}

// Type checks and conversions only; the ranges and the node URIs are left to validate(), which
// hand-built configs go through too.
error_code read_config(const json_value& doc, client_config& out, std::string& why) {
    if (!doc.is_object()) return fail(why, "expected a JSON object at the top level, got " + describe(doc));
    if (auto ec =
            check_keys(doc, "",
                       {"nodes", "key_prefix", "max_ttl_ms", "drift_factor", "node_timeout_ms",
                        "connect_timeout_ms", "health_check_interval_ms", "client_name", "restart_quarantine",
                        "max_queued_requests", "max_subscriptions", "retry", "tls"},
                       why)) {
        return ec;
    }
    const json_value* nodes = find(doc, "nodes");
    if (nodes == nullptr) return fail(why, "nodes: required key is missing");
    if (auto ec = read_nodes(*nodes, out.nodes, why)) return ec;
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
    if (auto* f = find(doc, "retry")) {
        if (auto ec = read_retry(*f, out.retry, why)) return ec;
    }
    if (auto* f = find(doc, "tls")) {
        if (auto ec = read_tls(*f, out.tls, why)) return ec;
    }
    return {};
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

    friend bool operator==(const node_identity&, const node_identity&) = default;
};

node_identity identity_of(const redis::node_address& a) {
    if (a.kind == redis::node_address::transport::unix_socket) return {true, a.path, 0};
    std::string host = a.host;
    for (char& c : host) {
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
    error_code ec;
    auto ip = boost::asio::ip::make_address(host, ec);
    if (!ec) host = ip.to_string();
    return {false, std::move(host), a.port};
}

error_code check_millis(milliseconds value, std::string_view path, bool allow_zero, std::string& why) {
    const std::int64_t n = value.count();
    if (n < 0 || (n == 0 && !allow_zero)) {
        return fail(why, std::string(path) +
                             (allow_zero ? ": must not be negative, got " : ": must be positive, got ") +
                             std::to_string(n) + " ms");
    }
    if (n > max_millis) {
        return fail(why, std::string(path) + ": " + std::to_string(n) + " ms is out of range (at most " +
                             std::to_string(max_millis) + " ms)");
    }
    return {};
}

client_config parse_json(std::string_view text, error_code& ec, std::string& why) {
    json_value doc;
    ec = parse_document(text, doc, why);
    if (ec) return {};
    client_config config;
    ec = read_config(doc, config, why);
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

error_code client_config::validate(std::string& why) const {
    if (nodes.empty()) return fail(why, "nodes: at least one node is required");
    std::vector<node_identity> seen;
    seen.reserve(nodes.size());
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        redis::node_address address;
        std::string uri_why;
        if (redis::parse_node_uri(nodes[i], address, uri_why)) {
            return fail(why, "nodes[" + std::to_string(i) + "]: " + uri_why, error::invalid_uri);
        }
        node_identity id = identity_of(address);
        for (std::size_t j = 0; j < seen.size(); ++j) {
            if (seen[j] == id) {
                return fail(why, "nodes[" + std::to_string(i) + "] is the same node as nodes[" +
                                     std::to_string(j) + "]: it would vote twice");
            }
        }
        seen.push_back(std::move(id));
    }
    if (auto ec = check_millis(max_ttl, "max_ttl_ms", false, why)) return ec;
    // Written so that NaN fails too.
    if (!(drift_factor >= 0.0 && drift_factor < 0.5)) {
        return fail(why, "drift_factor: expected a number in [0, 0.5), got " + format_double(drift_factor));
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
    return {};
}

}  // namespace redlock
