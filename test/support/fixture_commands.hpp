// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_TEST_SUPPORT_FIXTURE_COMMANDS_HPP
#define REDLOCK_TEST_SUPPORT_FIXTURE_COMMANDS_HPP

// What the multi-server fixtures (redis_cluster, redis_sentinel_group) say to their servers,
// and how they name them in errors.

#include "support/redis_server.hpp"
#include <redlock/resp/value.hpp>

#include <algorithm>
#include <initializer_list>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::test::fixture {

inline std::string address(const redis_server& s) {
    return s.host() + ":" + std::to_string(s.port());
}

/// "host1:p1,host2:p2,..." of `servers`.
inline std::string addresses(const std::vector<std::unique_ptr<redis_server>>& servers) {
    std::string text;
    for (const auto& s : servers) {
        if (!text.empty()) text += ',';
        text += address(*s);
    }
    return text;
}

/// "WORDS on host:port", for messages.
inline std::string describe(const redis_server& s, const std::vector<std::string>& args) {
    std::string text;
    for (const auto& a : args) {
        if (!text.empty()) text += ' ';
        text += a;
    }
    return text + " on " + address(s);
}

inline bool has_arg(const std::vector<std::string>& args, std::string_view name) {
    return std::find(args.begin(), args.end(), name) != args.end();
}

/// The word after `name` in `args`.
inline std::optional<std::string> arg_value(const std::vector<std::string>& args, std::string_view name) {
    for (std::size_t i = 0; i + 1 < args.size(); ++i) {
        if (args[i] == name) return args[i + 1];
    }
    return std::nullopt;
}

/// Sends a command that must answer +OK; std::runtime_error naming `who` otherwise.
inline void expect_ok(const char* who, const redis_server& s, const std::vector<std::string>& args) {
    const auto reply = s.command(args);
    if (reply.kind != resp::type::simple_string || reply.str != "OK")
        throw std::runtime_error(std::string(who) + ": " + describe(s, args) + ": " + resp::to_string(reply));
}

/// The password of the users a fixture's servers log in to each other as (a replica to its
/// master, a sentinel to a data server), and such a user's ACL rule: everything, as the
/// default user may (a sentinel reconfigures servers and talks on their hello channel).
inline constexpr const char* own_users_password = "fixture-internal";

inline std::vector<std::string> own_user_rule(const char* user) {
    return {user, "on", std::string(">") + own_users_password, "+@all", "~*", "&*"};
}

/// `--user <rule>` for each of `users`, then `--masteruser <replication_user> --masterauth ...`:
/// the arguments that define them on a server and have it log in to its master as the first.
inline void add_own_users(std::vector<std::string>& args, std::initializer_list<const char*> users,
                          const char* replication_user) {
    for (const char* user : users) {
        const auto rule = own_user_rule(user);
        args.push_back("--user");
        args.insert(args.end(), rule.begin(), rule.end());
    }
    args.insert(args.end(), {"--masteruser", replication_user, "--masterauth", own_users_password});
}

/// ACL SETUSER `user` with its rule on `s` again (after an ACL DELUSER).
inline void define_own_user(const char* who, const redis_server& s, const char* user) {
    std::vector<std::string> command = {"ACL", "SETUSER"};
    const auto rule = own_user_rule(user);
    command.insert(command.end(), rule.begin(), rule.end());
    expect_ok(who, s, command);
}

/// ACL DELUSER `users` on `s`: it also closes the connections logged in as them (ACL SETUSER
/// off would not).
inline void delete_own_users(const char* who, const redis_server& s, const std::vector<std::string>& users) {
    std::vector<std::string> command = {"ACL", "DELUSER"};
    command.insert(command.end(), users.begin(), users.end());
    const auto reply = s.command(command);
    if (reply.kind != resp::type::integer)
        throw std::runtime_error(std::string(who) + ": " + describe(s, command) + ": " +
                                 resp::to_string(reply));
}

/// One `field:value` line of an INFO or CLUSTER INFO reply; empty if absent.
inline std::string info_field(const std::string& text, std::string_view field) {
    const std::string key = "\n" + std::string(field) + ":";
    const std::string padded = "\n" + text;
    const auto pos = padded.find(key);
    if (pos == std::string::npos) return {};
    const auto start = pos + key.size();
    return padded.substr(start, padded.find_first_of("\r\n", start) - start);
}

}  // namespace redlock::test::fixture

#endif
