// SPDX-License-Identifier: BSL-1.0
#include "resp/reply_parser.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <limits>
#include <system_error>
#include <utility>

// Wire format: https://github.com/redis/redis-specifications/blob/master/protocol/RESP3.md
//
// Error determinism: every decision below depends only on a prefix of the stream, never on where
// a feed() happens to end, so any split of the bytes yields the same values AND the same error.
// This is why the type byte is checked as soon as it arrives and why the line limit is stated on
// "the first max_line_length + 2 bytes after the type byte contain no LF" (a rule a partial line
// can decide as well as a complete one).
//
// Line terminators: a line ended by a bare LF (no CR before it) is redlock::error::protocol_error.

namespace redlock::resp {
namespace {

// Reserving by a declared count would let one hostile header allocate gigabytes; past this bound
// vectors grow with the elements that actually arrive.
constexpr std::size_t max_reserve_elements = 1024;
// Same for a bulk payload split across feeds: reserve what arrived plus this much, then let
// std::string grow geometrically with the bytes received.
constexpr std::size_t bulk_reserve_slack = 64 * 1024;

constexpr std::size_t saturating_add(std::size_t a, std::size_t b) noexcept {
    return a > std::numeric_limits<std::size_t>::max() - b ? std::numeric_limits<std::size_t>::max() : a + b;
}

constexpr bool is_type_byte(char c) noexcept {
    switch (c) {
        case '+':
        case '-':
        case ':':
        case '$':
        case '*':
        case '_':
        case ',':
        case '#':
        case '(':
        case '!':
        case '=':
        case '%':
        case '~':
        case '>':
        case '|':
            return true;
        default:
            return false;
    }
}

constexpr bool is_digit(char c) noexcept {
    return c >= '0' && c <= '9';
}

// Strict decimal int64: optional '-', then at least one digit, nothing else ('+', spaces and
// letters are rejected). Characters are validated before magnitude so "12x" is invalid, not
// an overflow, whatever its length.
redlock::error parse_int64(std::string_view s, std::int64_t& out) noexcept {
    std::size_t i = 0;
    const bool negative = !s.empty() && s[0] == '-';
    if (negative) i = 1;
    if (i == s.size()) return redlock::error::resp_invalid_number;
    for (std::size_t j = i; j < s.size(); ++j) {
        if (!is_digit(s[j])) return redlock::error::resp_invalid_number;
    }
    const std::uint64_t limit =
        static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) + (negative ? 1u : 0u);
    std::uint64_t acc = 0;
    for (; i < s.size(); ++i) {
        const auto d = static_cast<std::uint64_t>(s[i] - '0');
        if (acc > (limit - d) / 10) return redlock::error::resp_length_overflow;
        acc = acc * 10 + d;
    }
    // C++20 defines the conversion modulo 2^64, so 2^63 maps to INT64_MIN without UB.
    out = negative ? static_cast<std::int64_t>(0 - acc) : static_cast<std::int64_t>(acc);
    return {};
}

// Lengths and counts: a non-negative int64, or exactly "-1" (the RESP2 null) where allowed.
// Any other negative number is invalid, including "-0" and "-01".
redlock::error parse_length(std::string_view s, bool allow_null, std::int64_t& out) noexcept {
    if (!s.empty() && s[0] == '-') {
        if (allow_null && s == "-1") {
            out = -1;
            return {};
        }
        return redlock::error::resp_invalid_number;
    }
    return parse_int64(s, out);
}

bool parse_double(std::string_view s, double& out) noexcept {
    if (s.empty()) return false;
    // from_chars is locale-independent, rejects a leading '+' and whitespace, and accepts the
    // "inf", "-inf" and "nan" that Redis sends.
    const auto r = std::from_chars(s.data(), s.data() + s.size(), out);
    return r.ec == std::errc{} && r.ptr == s.data() + s.size();
}

bool is_big_number(std::string_view s) noexcept {
    if (!s.empty() && s[0] == '-') s.remove_prefix(1);
    return !s.empty() && std::all_of(s.begin(), s.end(), is_digit);
}

}  // namespace

reply_parser::reply_parser(parser_limits limits) : limits_(limits) {}

bool reply_parser::done() const noexcept {
    return done_;
}

value reply_parser::take() {
    value out = std::move(result_);
    result_ = value{};
    done_ = false;
    reply_bytes_ = 0;
    return out;
}

void reply_parser::reset() {
    error_ = {};
    stack_.clear();
    pending_attributes_.clear();
    line_.clear();
    result_ = value{};
    done_ = false;
    reply_bytes_ = 0;
    in_bulk_ = false;
    bulk_remaining_ = 0;
    crlf_remaining_ = 0;
    bulk_ = std::string{};  // release a possibly large buffer
}

void reply_parser::fail(redlock::error e) noexcept {
    if (!error_) error_ = e;
}

void reply_parser::charge(std::size_t bytes) noexcept {
    reply_bytes_ = saturating_add(reply_bytes_, bytes);
    if (reply_bytes_ > limits_.max_reply_bytes) fail(redlock::error::resp_reply_too_large);
}

std::size_t reply_parser::feed(std::string_view data) {
    std::size_t pos = 0;
    while (pos < data.size() && !done_ && !error_) {
        const std::string_view rest = data.substr(pos);
        if (in_bulk_) {
            pos += feed_bulk(rest);
        } else if (!line_.empty()) {
            pos += feed_carried_line(rest);
        } else {
            pos += feed_fresh_line(rest);
        }
    }
    return pos;
}

// The common case: the whole header line is in `data`, parsed in place without a copy.
std::size_t reply_parser::feed_fresh_line(std::string_view data) {
    const char kind = data[0];
    if (!is_type_byte(kind)) {
        fail(redlock::error::resp_invalid_type);
        return 1;
    }
    // Type byte + up to max_line_length content bytes + CR + LF. Bounding the search also bounds
    // the work spent on a hostile megabyte without a newline.
    const std::size_t max_line = saturating_add(limits_.max_line_length, 3);
    const std::size_t window = std::min(data.size(), max_line);
    const void* lf = std::memchr(data.data(), '\n', window);
    if (lf == nullptr) {
        if (data.size() >= max_line) {
            fail(redlock::error::resp_line_too_long);
            return window;
        }
        line_.assign(data.data(), data.size());
        return data.size();
    }
    const auto lf_index = static_cast<std::size_t>(static_cast<const char*>(lf) - data.data());
    if (lf_index < 2 || data[lf_index - 1] != '\r') {
        fail(redlock::error::protocol_error);
        return lf_index + 1;
    }
    process_line(kind, data.substr(1, lf_index - 2));
    return lf_index + 1;
}

// A header line that started in an earlier feed; line_ holds its first bytes (never an LF).
std::size_t reply_parser::feed_carried_line(std::string_view data) {
    const std::size_t content_so_far = line_.size() - 1;
    const std::size_t max_content = saturating_add(limits_.max_line_length, 2);  // CR + LF
    const std::size_t room = max_content - content_so_far;  // > 0: checked when line_ was stored
    const std::size_t window = std::min(data.size(), room);
    const void* lf = std::memchr(data.data(), '\n', window);
    if (lf == nullptr) {
        if (window == room) {
            fail(redlock::error::resp_line_too_long);
            return window;
        }
        line_.append(data.data(), window);
        return window;
    }
    const auto lf_index = static_cast<std::size_t>(static_cast<const char*>(lf) - data.data());
    line_.append(data.data(), lf_index);
    if (line_.size() < 2 || line_.back() != '\r') {
        fail(redlock::error::protocol_error);
        return lf_index + 1;
    }
    process_line(line_[0], std::string_view(line_).substr(1, line_.size() - 2));
    line_.clear();
    return lf_index + 1;
}

void reply_parser::process_line(char kind, std::string_view content) {
    if (kind == '+' || kind == '-' || kind == ',') charge(content.size());
    switch (kind) {
        case '+':
            new_scalar(type::simple_string).str.assign(content);
            break;
        case '-':
            new_scalar(type::error).str.assign(content);
            break;
        case ':': {
            std::int64_t n = 0;
            if (const redlock::error e = parse_int64(content, n); e != redlock::error{}) return fail(e);
            new_scalar(type::integer).integer = n;
            break;
        }
        case '_':
            if (!content.empty()) return fail(redlock::error::protocol_error);
            new_scalar(type::null);
            break;
        case ',': {
            double d = 0;
            if (!parse_double(content, d)) return fail(redlock::error::resp_invalid_number);
            value& v = new_scalar(type::double_number);
            v.number = d;
            v.str.assign(content);
            break;
        }
        case '#': {
            if (content != "t" && content != "f") return fail(redlock::error::resp_invalid_number);
            new_scalar(type::boolean).integer = content == "t" ? 1 : 0;
            break;
        }
        case '(':
            if (!is_big_number(content)) return fail(redlock::error::resp_invalid_number);
            new_scalar(type::big_number).str.assign(content);
            break;
        case '$':
        case '!':
        case '=':
            return start_bulk(kind, content);
        default:
            return start_aggregate(kind, content);  // * % ~ > |: is_type_byte() vetted the rest
    }
    value_completed();
}

void reply_parser::start_bulk(char kind, std::string_view content) {
    std::int64_t n = 0;
    if (const redlock::error e = parse_length(content, kind == '$', n); e != redlock::error{}) return fail(e);
    if (n < 0) {  // RESP2 null bulk string
        new_scalar(type::null);
        return value_completed();
    }
    if (static_cast<std::uint64_t>(n) > limits_.max_bulk_length)
        return fail(redlock::error::resp_bulk_too_large);
    in_bulk_ = true;
    bulk_kind_ = kind;
    bulk_remaining_ = static_cast<std::uint64_t>(n);
    crlf_remaining_ = 2;
    bulk_.clear();
}

std::size_t reply_parser::feed_bulk(std::string_view data) {
    // Fast path: nothing of this payload buffered yet and all of it, CRLF included, is here.
    if (crlf_remaining_ == 2 && bulk_.empty() && data.size() >= 2 && bulk_remaining_ <= data.size() - 2) {
        const auto n = static_cast<std::size_t>(bulk_remaining_);
        in_bulk_ = false;
        charge(n);
        if (error_) return n;
        if (data[n] != '\r' || data[n + 1] != '\n') {
            fail(redlock::error::resp_missing_crlf);
            return n;
        }
        finish_bulk(data.substr(0, n), nullptr);
        return n + 2;
    }
    std::size_t pos = 0;
    if (bulk_remaining_ > 0) {
        const auto take = static_cast<std::size_t>(std::min<std::uint64_t>(bulk_remaining_, data.size()));
        // As the payload arrives, not as declared (see below).
        charge(take);
        if (error_) {
            in_bulk_ = false;
            return take;
        }
        if (bulk_.empty()) {
            // Never by the declared size: a "$4294967296" header followed by a trickle must cost
            // memory in proportion to the trickle.
            bulk_.reserve(static_cast<std::size_t>(
                std::min<std::uint64_t>(bulk_remaining_, saturating_add(take, bulk_reserve_slack))));
        }
        bulk_.append(data.data(), take);
        bulk_remaining_ -= take;
        pos = take;
    }
    // CR and LF are checked byte by byte, so a split between them changes nothing.
    while (bulk_remaining_ == 0 && crlf_remaining_ > 0 && pos < data.size()) {
        const char expected = crlf_remaining_ == 2 ? '\r' : '\n';
        if (data[pos] != expected) {
            in_bulk_ = false;
            fail(redlock::error::resp_missing_crlf);
            return pos;
        }
        ++pos;
        --crlf_remaining_;
    }
    if (bulk_remaining_ == 0 && crlf_remaining_ == 0) {
        in_bulk_ = false;
        // A local, so a large payload's buffer leaves with the value or is freed here, never kept.
        std::string payload = std::move(bulk_);
        bulk_.clear();
        finish_bulk(payload, &payload);
    }
    return pos;
}

// `owned`, when set, is the buffer behind `payload` and may be moved from.
void reply_parser::finish_bulk(std::string_view payload, std::string* owned) {
    switch (bulk_kind_) {
        case '=': {
            // "txt:content": the three-letter format, a colon, then the content.
            if (payload.size() < 4 || payload[3] != ':') return fail(redlock::error::protocol_error);
            value& v = new_scalar(type::verbatim_string);
            v.format.assign(payload.substr(0, 3));
            v.str.assign(payload.substr(4));
            break;
        }
        default: {
            value& v = new_scalar(bulk_kind_ == '!' ? type::error : type::bulk_string);
            if (owned != nullptr) {
                v.str = std::move(*owned);
            } else {
                v.str.assign(payload);
            }
            break;
        }
    }
    value_completed();
}

void reply_parser::start_aggregate(char kind, std::string_view content) {
    std::int64_t n = 0;
    if (const redlock::error e = parse_length(content, kind == '*', n); e != redlock::error{}) return fail(e);
    if (n < 0) {  // RESP2 null array
        new_scalar(type::null);
        return value_completed();
    }
    if (static_cast<std::uint64_t>(n) > limits_.max_aggregate_elements) {
        return fail(redlock::error::resp_aggregate_too_large);
    }
    if (stack_.size() >= limits_.max_depth) return fail(redlock::error::resp_nesting_too_deep);
    charge(sizeof(value));
    if (error_) return;

    const bool is_map_like = kind == '%' || kind == '|';
    // n <= INT64_MAX, so 2n fits in 64 unsigned bits.
    const std::uint64_t count = static_cast<std::uint64_t>(n) * (is_map_like ? 2u : 1u);

    if (kind == '|') {
        frame f;
        f.is_attribute = true;
        f.remaining = count;
        // Attributes already waiting (an attribute right after another) merge with this one.
        f.node.attributes = std::move(pending_attributes_);
        pending_attributes_.clear();
        if (count == 0) {
            pending_attributes_ = std::move(f.node.attributes);
            return;
        }
        f.node.elements.reserve(
            static_cast<std::size_t>(std::min<std::uint64_t>(count, max_reserve_elements)));
        stack_.push_back(std::move(f));
        return;
    }

    value node;
    switch (kind) {
        case '*':
            node.kind = type::array;
            break;
        case '%':
            node.kind = type::map;
            break;
        case '~':
            node.kind = type::set;
            break;
        default:
            node.kind = type::push;
            break;
    }
    if (!pending_attributes_.empty()) {
        node.attributes = std::move(pending_attributes_);
        pending_attributes_.clear();
    }
    if (count == 0) {
        place(std::move(node));
        return value_completed();
    }
    node.elements.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(count, max_reserve_elements)));
    stack_.push_back(frame{std::move(node), count, false});
}

// The slot of the next scalar, built in place: result_ at the top level, else the last element
// of the innermost aggregate. Pending attributes annotate it.
value& reply_parser::new_scalar(type kind) {
    charge(sizeof(value));
    value& v = stack_.empty() ? result_ : stack_.back().node.elements.emplace_back();
    v.kind = kind;
    if (!pending_attributes_.empty()) {
        v.attributes = std::move(pending_attributes_);
        pending_attributes_.clear();
    }
    return v;
}

void reply_parser::place(value&& v) {
    if (stack_.empty()) {
        result_ = std::move(v);
    } else {
        stack_.back().node.elements.push_back(std::move(v));
    }
}

// A value was just placed (by new_scalar or place): count it in its parent and close every
// aggregate that this completes, innermost first.
void reply_parser::value_completed() {
    while (!stack_.empty()) {
        frame& top = stack_.back();
        if (--top.remaining != 0) return;
        if (top.is_attribute) {
            // An attribute is not an element of its parent: it waits for the next value.
            std::vector<value> attributes = std::move(top.node.attributes);
            attributes.insert(attributes.end(), std::make_move_iterator(top.node.elements.begin()),
                              std::make_move_iterator(top.node.elements.end()));
            stack_.pop_back();
            pending_attributes_ = std::move(attributes);
            return;
        }
        value node = std::move(top.node);
        stack_.pop_back();
        place(std::move(node));
    }
    done_ = true;
}

}  // namespace redlock::resp
