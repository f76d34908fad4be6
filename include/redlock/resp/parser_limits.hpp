// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_RESP_PARSER_LIMITS_HPP
#define REDLOCK_RESP_PARSER_LIMITS_HPP

#include <redlock/export.hpp>

#include <cstddef>

namespace redlock::resp {

/// Bounds that turn hostile input into an error instead of a crash or a huge allocation.
struct REDLOCK_API parser_limits {
    std::size_t max_depth = 64;                        ///< nesting of aggregates (attributes count too)
    std::size_t max_aggregate_elements = 1u << 20;     ///< declared elements of one aggregate
    std::size_t max_bulk_length = 512u * 1024 * 1024;  ///< declared length of one bulk/verbatim/blob error
    std::size_t max_line_length = 64u * 1024;          ///< any header line: status, error, number, lengths
    /// The memory one reply may take once parsed: every value counts its own size (a 3-byte `_`
    /// null becomes a value of a hundred bytes or more) plus its text. Bounds what the other
    /// limits allow together (a million small elements; many bulks below max_bulk_length).
    std::size_t max_reply_bytes = 64u * 1024 * 1024;
};

}  // namespace redlock::resp

#endif
