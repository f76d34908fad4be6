// SPDX-License-Identifier: BSL-1.0
#include "redis/handshake.hpp"

#include "resp/field_of.hpp"
#include <redlock/error.hpp>
#include <redlock/redis/server_version.hpp>

#include <span>
#include <string_view>

namespace redlock::redis::detail {

namespace {

// The server's reply to a HELLO that it does not understand (Redis < 6) or refuses the version.
bool is_hello_unsupported(const resp::value& v) {
    auto code = v.error_code();
    return code == "NOPROTO" || (code == "ERR" && v.str.find("unknown command") != std::string::npos);
}

// The error code is the reply's first word.
std::string_view error_code_of(std::string_view text) {
    return text.substr(0, text.find(' '));
}

// A server's refusal of the credentials or of an ACL permission, from its error text.
bool is_auth_refusal(std::string_view text) {
    const auto code = error_code_of(text);
    return code == "WRONGPASS" || code == "NOAUTH" || code == "NOPERM" ||
           (code == "ERR" && text.find("AUTH") != std::string_view::npos);
}

bool is_auth_error(const resp::value& v) {
    return v.is_error() && is_auth_refusal(v.str);
}

handshake_failure refused(boost::system::error_code ec, std::string_view command, const std::string& node,
                          const resp::value& reply) {
    return {ec, std::string(command) + " on " + node + " failed: " + reply.str, is_permanent_refusal(reply)};
}

handshake_failure refused(std::string_view command, const std::string& node, const resp::value& reply) {
    return refused(is_auth_error(reply) ? error::auth_failed : error::handshake_failed, command, node, reply);
}

}  // namespace

bool is_permanent_refusal(std::string_view text) {
    if (is_auth_refusal(text)) return true;
    if (error_code_of(text) != "ERR") return false;
    // The last two: a script's call the ACL refuses ("ERR The user executing the script can't
    // run this command ...").
    for (std::string_view words :
         {"unknown command", "unknown subcommand", "DB index", "can't run this command", "no permissions"})
        if (text.find(words) != std::string_view::npos) return true;
    return false;
}

bool is_permanent_refusal(const resp::value& reply) {
    return reply.is_error() && is_permanent_refusal(std::string_view(reply.str));
}

resp::request hello_request(const node_address& a) {
    resp::request hello;
    if (!a.password.empty()) {
        hello.push("HELLO", "3", "AUTH", a.username.empty() ? std::string_view("default") : a.username,
                   a.password);
    } else {
        hello.push("HELLO", "3");
    }
    return hello;
}

hello_outcome read_hello(const resp::value& reply, const std::string& node, std::string_view min_version) {
    if (reply.is_error()) {
        if (is_hello_unsupported(reply)) return {2, {}};
        return {3, refused("HELLO", node, reply)};
    }
    if (reply.kind != resp::type::map && reply.kind != resp::type::array)
        return {3, {error::unexpected_reply, "HELLO on " + node + " returned " + resp::to_string(reply)}};
    const auto* version = min_version.empty() ? nullptr : resp::field_of(reply, "version");
    if (version && older_than(version->str, min_version).value_or(false)) {
        return {3,
                {error::handshake_failed,
                 node + " runs Redis " + version->str + ", older than the " + std::string(min_version) +
                     " this client needs",
                 true}};
    }
    return {3, {}};
}

resp::request auth_request(const node_address& a) {
    resp::request auth;
    if (a.password.empty()) return auth;
    if (a.username.empty()) {
        auth.push("AUTH", a.password);
    } else {
        auth.push("AUTH", a.username, a.password);
    }
    return auth;
}

handshake_failure read_auth(const resp::value& reply, const std::string& node) {
    if (reply.is_error()) return refused(error::auth_failed, "AUTH", node, reply);
    return {};
}

setup_plan::setup_plan(const connection_config& cfg) : cfg_(cfg) {
    const auto& a = cfg.address;
    if (a.db != 0) {
        request_.push("SELECT", a.db);
        names_.push_back("SELECT " + std::to_string(a.db));
    }
    if (!cfg.client_name.empty()) {
        request_.push("CLIENT", "SETNAME", cfg.client_name);
        names_.push_back("CLIENT SETNAME");
    }
    if (cfg.require_master) {
        has_role_ = true;
        role_index_ = request_.size();
        request_.push("ROLE");
        names_.push_back("ROLE");
    }
    info_index_ = request_.size();
    if (cfg.on_server_info) {
        has_info_ = true;
        request_.push("INFO", "server");
        names_.push_back("INFO server");
    }
    first_extra_ = request_.size();
    for (const auto& c : cfg.setup_commands) {
        if (c.empty()) continue;
        request_.push_range(c.front(), std::span(c).subspan(1));
        names_.push_back(c.front());
    }
    extras_ = request_.size() - first_extra_;
    first_script_ = request_.size();
    for (const auto& s : cfg.scripts) {
        request_.push("SCRIPT", "LOAD", s.source);
        names_.push_back("SCRIPT LOAD " + std::string(s.name));
    }
}

handshake_failure setup_plan::check(const std::vector<resp::value>& replies, const std::string& node) const {
    if (replies.size() != request_.size())
        return {error::unexpected_reply, "the setup on " + node + " got " + std::to_string(replies.size()) +
                                             " replies to " + std::to_string(request_.size()) + " commands"};
    for (std::size_t i = 0; i < replies.size(); ++i) {
        const bool callers = i >= first_extra_ && i < first_extra_ + extras_;
        if (replies[i].is_error() && !callers) return refused(names_[i], node, replies[i]);
    }
    if (has_role_) {
        const auto& role = replies[role_index_];
        const bool master =
            role.kind == resp::type::array && !role.elements.empty() && role.elements.front().str == "master";
        if (!master)
            return {error::master_not_found,
                    "ROLE on " + node + " says " + resp::to_string(role) + ": it is not a master (any more)"};
    }
    for (std::size_t i = 0; i < cfg_.scripts.size(); ++i) {
        const auto& got = replies[first_script_ + i];
        if (got.str != cfg_.scripts[i].sha1) {
            return {error::handshake_failed, "SCRIPT LOAD " + std::string(cfg_.scripts[i].name) + " on " +
                                                 node + " returned " + resp::to_string(got) + ", expected " +
                                                 std::string(cfg_.scripts[i].sha1)};
        }
    }
    return {};
}

std::vector<resp::value> setup_plan::setup_replies(const std::vector<resp::value>& replies) const {
    const auto first = replies.begin() + static_cast<std::ptrdiff_t>(first_extra_);
    return {first, first + static_cast<std::ptrdiff_t>(extras_)};
}

std::string setup_plan::server_info(const std::vector<resp::value>& replies) const {
    return has_info_ ? replies[info_index_].str : std::string();
}

}  // namespace redlock::redis::detail
