// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_RESP_REPLY_PARSER_HPP
#define REDLOCK_RESP_REPLY_PARSER_HPP

#include <redlock/error.hpp>
#include <redlock/resp/parser_limits.hpp>
#include <redlock/resp/value.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::resp {

/// Sans-I/O incremental RESP2/RESP3 reply parser. Feed it bytes in any split (down to one byte
/// at a time); it yields the same values. Memory grows with the bytes received, never with a
/// declared length: a reply that declares a 4 GB bulk allocates only what actually arrives.
///
/// Errors (`redlock::error`, sticky until reset()): resp_invalid_type, resp_invalid_number (also
/// `$?`/`*?` streamed types and negative lengths other than the RESP2 null -1),
/// resp_length_overflow, resp_line_too_long (max_line_length counts the bytes between the type
/// byte and the CRLF of every header line, bulk and aggregate length lines included),
/// resp_bulk_too_large, resp_aggregate_too_large, resp_nesting_too_deep, resp_missing_crlf,
/// resp_reply_too_large (the parsed reply's memory, counted as it grows), and
/// protocol_error for a line ended by a bare LF, a `_` null with content, or a verbatim string
/// without its "fmt:" prefix.
///
/// Usage: `n = p.feed(data)`; drop the first `n` bytes of `data`; if `p.done()`, take the value
/// with `p.take()` and feed the rest; if `p.error()`, the stream is broken (reset() to reuse).
class reply_parser {
public:
    explicit reply_parser(parser_limits limits = {});

    /// Consumes bytes of `data` until one complete reply is parsed, `data` runs out, or an error
    /// is found. Returns how many bytes were consumed. Does nothing while a value is waiting to be taken
    /// or after an error.
    std::size_t feed(std::string_view data);

    /// A complete reply is ready for take().
    [[nodiscard]] bool done() const noexcept;

    /// Moves the complete reply out; the parser is then ready for the next one.
    value take();

    /// The first error found; sticky until reset().
    [[nodiscard]] boost::system::error_code error() const noexcept { return error_; }

    /// Forgets any partial reply and error.
    void reset();

    [[nodiscard]] const parser_limits& limits() const noexcept { return limits_; }

private:
    // An aggregate (or attribute) still waiting for elements. The node lives here, not in the
    // tree, so that the tree only ever holds complete values; it moves into its parent once full.
    struct frame {
        value node;                   // the aggregate being filled; an attribute stashes earlier
                                      // pending attributes in node.attributes (they merge)
        std::uint64_t remaining = 0;  // elements still expected (2N for maps and attributes)
        bool is_attribute = false;    // collects into the next value's `attributes`, not an element
    };

    void fail(redlock::error e) noexcept;
    // Counts `bytes` of the reply's memory against max_reply_bytes; fails once past it.
    void charge(std::size_t bytes) noexcept;
    std::size_t feed_fresh_line(std::string_view data);
    std::size_t feed_carried_line(std::string_view data);
    std::size_t feed_bulk(std::string_view data);
    void process_line(char kind, std::string_view content);
    void start_bulk(char kind, std::string_view content);
    void start_aggregate(char kind, std::string_view content);
    void finish_bulk(std::string_view payload, std::string* owned);
    value& new_scalar(type kind);
    void place(value&& v);
    void value_completed();

    parser_limits limits_;
    boost::system::error_code error_;
    std::vector<frame> stack_;               // explicit stack: hostile nesting never recurses
    std::vector<value> pending_attributes_;  // attributes waiting for the value they annotate
    std::string line_;  // a header line split across feeds (type byte included); empty if none
    value result_;
    bool done_ = false;
    std::size_t reply_bytes_ = 0;  // the memory of the reply being parsed (see charge())
    // Bulk payload in progress ($, ! and =).
    bool in_bulk_ = false;
    char bulk_kind_ = '$';
    std::uint64_t bulk_remaining_ = 0;  // payload bytes still expected, then crlf_remaining_
    std::size_t crlf_remaining_ = 0;    // 2: expecting "\r\n", 1: expecting "\n"
    std::string bulk_;                  // payload received so far when it spans feeds
};

}  // namespace redlock::resp

#endif
