// SPDX-License-Identifier: BSL-1.0
#include "cli_args.hpp"

#include <charconv>
#include <cstdint>
#include <limits>

namespace redlock::cli {

std::optional<std::chrono::milliseconds> parse_duration(std::string_view text) {
    // A week is more than any lock or wait needs, and far from overflowing anything.
    constexpr std::uint64_t limit = 7ull * 24 * 3'600'000;
    struct unit_of_time {
        std::string_view name;
        std::uint64_t milliseconds;
    };
    // "ms" before "m": the longest name that matches.
    constexpr unit_of_time units[] = {{"h", 3'600'000}, {"ms", 1}, {"m", 60'000}, {"s", 1000}};
    if (text.empty()) return std::nullopt;
    std::uint64_t total = 0;
    // Parts go from the largest unit down, each once: "1m30s", not "30s1m" nor "1m1m".
    std::uint64_t previous_scale = limit + 1;
    while (!text.empty()) {
        std::uint64_t whole = 0;
        const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), whole);
        if (ec != std::errc() || p == text.data()) return std::nullopt;
        text.remove_prefix(static_cast<std::size_t>(p - text.data()));
        std::uint64_t fraction = 0;
        std::uint64_t fraction_scale = 1;
        if (!text.empty() && text.front() == '.') {
            text.remove_prefix(1);
            while (!text.empty() && text.front() >= '0' && text.front() <= '9') {
                if (fraction_scale == 1'000'000'000) return std::nullopt;  // nine digits at most
                fraction = fraction * 10 + static_cast<std::uint64_t>(text.front() - '0');
                fraction_scale *= 10;
                text.remove_prefix(1);
            }
            if (fraction_scale == 1) return std::nullopt;  // "1.s"
        }
        std::uint64_t scale = 0;
        if (text.empty() && previous_scale > limit) {
            scale = 1000;  // a bare number, alone: seconds
        } else {
            for (const auto& u : units) {
                if (text.starts_with(u.name)) {
                    scale = u.milliseconds;
                    text.remove_prefix(u.name.size());
                    break;
                }
            }
        }
        if (scale == 0 || scale >= previous_scale) return std::nullopt;
        previous_scale = scale;
        // A part finer than a millisecond ("1.0005s") is refused, not rounded.
        if (fraction * scale % fraction_scale != 0) return std::nullopt;
        if (whole > limit / scale) return std::nullopt;
        total += whole * scale + fraction * scale / fraction_scale;
        if (total > limit) return std::nullopt;
    }
    return std::chrono::milliseconds(static_cast<std::int64_t>(total));
}

namespace {

// The check of a DURATION flag: CLI11 prefixes its message with the flag's name.
std::string duration_error(const std::string& text) {
    if (parse_duration(text)) return {};
    return "\"" + text + "\" is not a duration (like 500ms, 1.5s, 1m30s)";
}

}  // namespace

CLI::Option* add_duration_flag(CLI::App& command, const std::string& flag, std::chrono::milliseconds& into,
                               const std::string& description) {
    return command
        .add_option_function<std::string>(
            flag, [&into](const std::string& text) { into = *parse_duration(text); }, description)
        ->check(duration_error)
        ->type_name("DURATION");
}

CLI::Option* add_duration_flag(CLI::App& command, const std::string& flag,
                               std::optional<std::chrono::milliseconds>& into,
                               const std::string& description) {
    return command
        .add_option_function<std::string>(
            flag, [&into](const std::string& text) { into = parse_duration(text); }, description)
        ->check(duration_error)
        ->type_name("DURATION");
}

CLI::Option* add_switch(CLI::App& command, const std::string& flag, bool& into,
                        const std::string& description) {
    return command.add_flag(flag, into, description)->disable_flag_override();
}

std::string usage_formatter::make_usage(const CLI::App*, std::string) const {
    return "usage: " + usage_ + "\n";
}

CLI::App* add_command(CLI::App& redlock, const std::string& name, const std::string& summary,
                      const std::string& usage, const std::string& footer) {
    auto* command = redlock.add_subcommand(name, summary);
    auto format = std::make_shared<usage_formatter>(usage);
    format->column_width(28);
    command->formatter(format);
    command->footer(footer);
    command->positionals_at_end();
    return command;
}

std::vector<std::string> split_list(std::string_view text) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start <= text.size()) {
        auto comma = text.find(',', start);
        if (comma == std::string_view::npos) comma = text.size();
        if (comma > start) out.emplace_back(text.substr(start, comma - start));
        start = comma + 1;
    }
    return out;
}

}  // namespace redlock::cli
