// SPDX-License-Identifier: BSL-1.0
// libFuzzer target for the RESP reply parser.
//
//   clang++ -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude -Isrc \
//       test/fuzz/resp_parser_fuzz.cpp src/resp/reply_parser.cpp src/resp/value.cpp src/error.cpp \
//       -o /tmp/resp_fuzz
//   /tmp/resp_fuzz -max_total_time=60 test/fuzz/corpus
//
// Besides "no crash, no sanitizer report", it checks the parser's central promise: the values
// and the error do not depend on how the stream is split into feeds.

#include "resp/reply_parser.hpp"
#include <redlock/resp/value.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace {

using redlock::resp::parser_limits;
using redlock::resp::reply_parser;
using redlock::resp::value;

struct outcome {
    std::vector<value> values;
    boost::system::error_code error;
    std::size_t consumed = 0;
};

[[noreturn]] void fail() {
    __builtin_trap();
}

// value's operator== except that NaN equals NaN: ",nan\r\n" must compare equal to itself.
bool same(const value& a, const value& b) {
    if (a.kind != b.kind || a.integer != b.integer || a.str != b.str || a.format != b.format ||
        a.elements.size() != b.elements.size() || a.attributes.size() != b.attributes.size()) {
        return false;
    }
    if (!(a.number == b.number) && !(std::isnan(a.number) && std::isnan(b.number))) return false;
    for (std::size_t i = 0; i < a.elements.size(); ++i) {
        if (!same(a.elements[i], b.elements[i])) return false;
    }
    for (std::size_t i = 0; i < a.attributes.size(); ++i) {
        if (!same(a.attributes[i], b.attributes[i])) return false;
    }
    return true;
}

bool same(const outcome& a, const outcome& b) {
    if (a.error != b.error || a.values.size() != b.values.size()) return false;
    // Without an error every byte is consumed, so the streams must agree on it too.
    if (!a.error && a.consumed != b.consumed) return false;
    for (std::size_t i = 0; i < a.values.size(); ++i) {
        if (!same(a.values[i], b.values[i])) return false;
    }
    return true;
}

// Feeds `data` in chunks whose boundaries are `cuts` (ascending offsets), taking every reply.
outcome run(std::string_view data, const parser_limits& limits, const std::vector<std::size_t>& cuts) {
    outcome out;
    reply_parser p(limits);
    std::size_t begin = 0;
    for (std::size_t k = 0; k <= cuts.size() && !p.error(); ++k) {
        const std::size_t end = k < cuts.size() ? cuts[k] : data.size();
        std::string_view chunk = data.substr(begin, end - begin);
        begin = end;
        while (!chunk.empty() && !p.error()) {
            const std::size_t n = p.feed(chunk);
            if (n > chunk.size()) fail();
            chunk.remove_prefix(n);
            out.consumed += n;
            if (p.done()) {
                out.values.push_back(p.take());
                (void)to_string(out.values.back());
                if (p.done()) fail();
            } else if (n == 0 && !p.error()) {
                fail();  // no progress on non-empty input: the caller would spin forever
            }
        }
    }
    // Sticky error: a further feed consumes nothing and changes nothing.
    if (p.error()) {
        const auto e = p.error();
        if (p.feed("+OK\r\n") != 0 || p.error() != e || p.done()) fail();
    }
    out.error = p.error();
    return out;
}

void check(std::string_view data, const parser_limits& limits, std::uint64_t seed) {
    const outcome whole = run(data, limits, {});

    // One split at a position derived from the data.
    const std::size_t at = data.empty() ? 0 : static_cast<std::size_t>(seed % (data.size() + 1));
    if (!same(whole, run(data, limits, {at}))) fail();

    // Several chunks of pseudo-random sizes (xorshift on the seed).
    std::vector<std::size_t> cuts;
    std::uint64_t x = seed | 1;
    for (std::size_t pos = 0;;) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        pos += 1 + static_cast<std::size_t>(x % 17);
        if (pos >= data.size()) break;
        cuts.push_back(pos);
    }
    if (!same(whole, run(data, limits, cuts))) fail();

    if (data.size() < 512) {
        std::vector<std::size_t> every_byte;
        for (std::size_t i = 1; i < data.size(); ++i)
            every_byte.push_back(i);
        if (!same(whole, run(data, limits, every_byte))) fail();
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    // FNV-1a: a split position that is a deterministic function of the input, so crashes replay.
    std::uint64_t seed = 14695981039346656037u;
    for (const std::uint8_t b : input)
        seed = (seed ^ b) * 1099511628211u;

    check(input, parser_limits{}, seed);

    parser_limits small;
    small.max_depth = 8;
    small.max_bulk_length = 1024;
    small.max_aggregate_elements = 64;
    small.max_line_length = 256;
    small.max_reply_bytes = 4096;  // reached by a few dozen values, or a few bulks
    check(input, small, seed);
    return 0;
}
