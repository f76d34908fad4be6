#ifndef REDLOCK_RESP_PARSER_LIMITS_HPP
#define REDLOCK_RESP_PARSER_LIMITS_HPP

#include <cstddef>

namespace redlock::resp {

/// Bounds that turn hostile input into an error instead of a crash or a huge allocation.
struct parser_limits {
    std::size_t max_depth = 64;                        ///< nesting of aggregates (attributes count too)
    std::size_t max_aggregate_elements = 1u << 20;     ///< declared elements of one aggregate
    std::size_t max_bulk_length = 512u * 1024 * 1024;  ///< declared length of one bulk/verbatim/blob error
    std::size_t max_line_length = 64u * 1024;          ///< any header line: status, error, number, lengths
};

}  // namespace redlock::resp

#endif
