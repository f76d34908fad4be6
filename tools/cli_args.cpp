// SPDX-License-Identifier: BSL-1.0
#include "cli_args.hpp"

#include <charconv>
#include <cstdint>
#include <limits>

namespace redlock::cli {

std::optional<std::chrono::milliseconds> parse_duration(std::string_view text) {
    std::uint64_t amount = 0;
    const auto* end = text.data() + text.size();
    auto [p, ec] = std::from_chars(text.data(), end, amount);
    if (ec != std::errc() || p == text.data()) return std::nullopt;
    const std::string_view unit(p, static_cast<std::size_t>(end - p));
    std::uint64_t scale = 0;
    if (unit == "ms") {
        scale = 1;
    } else if (unit == "s" || unit.empty()) {
        scale = 1000;
    } else if (unit == "m") {
        scale = 60'000;
    } else if (unit == "h") {
        scale = 3'600'000;
    } else {
        return std::nullopt;
    }
    // A week is more than any lock or wait needs, and far from overflowing anything.
    constexpr std::uint64_t limit = 7ull * 24 * 3'600'000;
    if (amount > limit / scale) return std::nullopt;
    return std::chrono::milliseconds(static_cast<std::int64_t>(amount * scale));
}

namespace {

// The check of a DURATION flag: CLI11 prefixes its message with the flag's name.
std::string duration_error(const std::string& text) {
    if (parse_duration(text)) return {};
    return "\"" + text + "\" is not a duration (like 500ms, 10s, 2m)";
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
