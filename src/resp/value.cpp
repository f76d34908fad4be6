// SPDX-License-Identifier: BSL-1.0
#include <redlock/resp/value.hpp>

#include <charconv>
#include <cstddef>
#include <string>
#include <string_view>

namespace redlock::resp {
namespace {

// The rendering goes to logs and test failure messages, so it stays short whatever the reply:
// a 512 MB bulk or a 1M-element array must not turn into a 512 MB log line.
constexpr std::size_t max_rendered_bytes = 256;
constexpr std::size_t max_rendered_elements = 64;
// Bounds the recursion as well: a tree deeper than this (possible with raised parser limits)
// cannot exhaust the stack here.
constexpr int max_rendered_depth = 16;

void append_number(std::string& out, std::size_t n) {
    char buf[24];
    const auto r = std::to_chars(buf, buf + sizeof buf, n);
    out.append(buf, r.ptr);
}

// Non-printable bytes become \xNN so that binary payloads (and CR/LF) keep log lines intact.
void append_escaped(std::string& out, std::string_view s) {
    static constexpr char hex[] = "0123456789abcdef";
    const std::size_t n = s.size() < max_rendered_bytes ? s.size() : max_rendered_bytes;
    for (std::size_t i = 0; i < n; ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        switch (c) {
            case '"':
                out += "\\\"";
                break;
            case '\\':
                out += "\\\\";
                break;
            case '\r':
                out += "\\r";
                break;
            case '\n':
                out += "\\n";
                break;
            case '\t':
                out += "\\t";
                break;
            default:
                if (c < 0x20 || c >= 0x7f) {
                    out += "\\x";
                    out += hex[c >> 4];
                    out += hex[c & 0xf];
                } else {
                    out += static_cast<char>(c);
                }
        }
    }
    if (n < s.size()) {
        out += "...(";
        append_number(out, s.size());
        out += " bytes)";
    }
}

void append_quoted(std::string& out, std::string_view s) {
    out += '"';
    append_escaped(out, s);
    out += '"';
}

void render(std::string& out, const value& v, int depth);

// Maps and attributes are flat k, v, k, v lists; render them as {k: v, ...}.
void render_list(std::string& out, const std::vector<value>& elements, bool as_map, int depth) {
    const std::size_t n = elements.size() < max_rendered_elements ? elements.size() : max_rendered_elements;
    for (std::size_t i = 0; i < n; ++i) {
        if (i != 0) out += (as_map && i % 2 == 1) ? ": " : ", ";
        render(out, elements[i], depth + 1);
    }
    if (n < elements.size()) {
        out += ", ...(";
        append_number(out, elements.size() - n);
        out += " more)";
    }
}

void render(std::string& out, const value& v, int depth) {
    if (depth > max_rendered_depth) {
        out += "...";
        return;
    }
    if (!v.attributes.empty()) {
        out += "|{";
        render_list(out, v.attributes, true, depth);
        out += "}| ";
    }
    switch (v.kind) {
        case type::null:
            out += "(nil)";
            break;
        case type::simple_string:
        case type::bulk_string:
            append_quoted(out, v.str);
            break;
        case type::error:
            out += "(error) ";
            append_escaped(out, v.str);
            break;
        case type::integer:
            out += "(integer) " + std::to_string(v.integer);
            break;
        case type::double_number:
            out += "(double) ";
            if (!v.str.empty()) {
                append_escaped(out, v.str);
            } else {
                char buf[32];
                const auto r = std::to_chars(buf, buf + sizeof buf, v.number);
                out.append(buf, r.ptr);
            }
            break;
        case type::boolean:
            out += v.integer != 0 ? "(true)" : "(false)";
            break;
        case type::big_number:
            out += "(big number) ";
            append_escaped(out, v.str);
            break;
        case type::verbatim_string:
            out += "(verbatim ";
            append_escaped(out, v.format);
            out += ") ";
            append_quoted(out, v.str);
            break;
        case type::array:
        case type::set:
        case type::push:
            out += v.kind == type::set ? "~[" : v.kind == type::push ? ">[" : "[";
            render_list(out, v.elements, false, depth);
            out += ']';
            break;
        case type::map:
            out += '{';
            render_list(out, v.elements, true, depth);
            out += '}';
            break;
    }
}

}  // namespace

std::string to_string(const value& v) {
    std::string out;
    render(out, v, 0);
    return out;
}

}  // namespace redlock::resp
