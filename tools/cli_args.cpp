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

arg_reader::arg_reader(int argc, char** argv, int first) {
    for (int i = first; i < argc; ++i)
        args_.emplace_back(argv[i]);
}

std::optional<std::string> arg_reader::next_flag() {
    if (inline_value_) throw usage_error(flag_ + " takes no value");
    if (at_ >= args_.size()) return std::nullopt;
    const std::string& a = args_[at_];
    if (a == "--") {
        separator_ = true;
        ++at_;
        return std::nullopt;
    }
    if (a.size() < 2 || a[0] != '-') return std::nullopt;
    ++at_;
    const auto eq = a.find('=');
    flag_ = a.substr(0, eq);
    inline_value_.reset();
    if (eq != std::string::npos) inline_value_ = a.substr(eq + 1);
    return flag_;
}

std::string arg_reader::value() {
    if (inline_value_) {
        auto v = std::move(*inline_value_);
        inline_value_.reset();
        return v;
    }
    if (at_ >= args_.size()) throw usage_error(flag_ + " needs a value");
    return args_[at_++];
}

std::chrono::milliseconds arg_reader::duration_value() {
    const auto text = value();
    auto d = parse_duration(text);
    if (!d) throw usage_error(flag_ + ": \"" + text + "\" is not a duration (like 500ms, 10s, 2m)");
    return *d;
}

long long arg_reader::number_value(long long min, long long max) {
    const auto text = value();
    long long n = 0;
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec != std::errc() || p != text.data() + text.size() || n < min || n > max) {
        throw usage_error(flag_ + ": \"" + text + "\" is not a whole number in [" + std::to_string(min) +
                          ", " + std::to_string(max) + "]");
    }
    return n;
}

std::vector<std::string> arg_reader::rest() {
    std::vector<std::string> out(args_.begin() + static_cast<std::ptrdiff_t>(at_), args_.end());
    at_ = args_.size();
    return out;
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
