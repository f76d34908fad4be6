// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_REDIS_HANDSHAKE_HPP
#define REDLOCK_REDIS_HANDSHAKE_HPP

// What a new connection says to its server before any request, and what the answers mean
// (I/O-free; connection.cpp sends and reads): HELLO 3, with AUTH in it when there is a
// password; on a server without HELLO, RESP2 and AUTH on its own; then one write of SELECT,
// CLIENT SETNAME, INFO server, the caller's setup commands and a SCRIPT LOAD per script.

#include <redlock/redis/connection.hpp>
#include <redlock/resp/request.hpp>
#include <redlock/resp/value.hpp>

#include <boost/system/error_code.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::redis::detail {

/// An answer that ends the handshake: the error, and a message that names the command, the
/// node and the server's words. A default one (no `ec`) lets it go on.
struct handshake_failure {
    boost::system::error_code ec;
    std::string message;
    /// Another attempt gets the same answer (is_permanent_refusal, a server below the version
    /// floor): see connection_error::permanent.
    bool permanent = false;
};

/// Whether a server's error reply refuses what no retry changes: the credentials (WRONGPASS,
/// NOAUTH, NOPERM, an AUTH error, a script's call the ACL refuses), a command that does not
/// exist there (renamed or disabled: "ERR unknown command", "ERR unknown subcommand") or a
/// database it does not have. LOADING, BUSY, MASTERDOWN, OOM and the like pass.
[[nodiscard]] bool is_permanent_refusal(const resp::value& reply);
[[nodiscard]] bool is_permanent_refusal(std::string_view server_text);

[[nodiscard]] resp::request hello_request(const node_address& a);

struct hello_outcome {
    int protocol = 3;  ///< 2: the server has no HELLO; auth_request() comes next
    handshake_failure failure;
};
/// Reads HELLO's reply: a map (RESP3); an unknown command or NOPROTO (RESP2); anything else
/// fails, as auth_failed when it is a refused password. A map whose "version" is older than
/// `min_version` ("major.minor"; empty: any) fails with handshake_failed, naming both.
[[nodiscard]] hello_outcome read_hello(const resp::value& reply, const std::string& node,
                                       std::string_view min_version = {});

/// RESP2's AUTH (with the user name if there is one); empty without a password.
[[nodiscard]] resp::request auth_request(const node_address& a);
[[nodiscard]] handshake_failure read_auth(const resp::value& reply, const std::string& node);

/// The one write after HELLO (and AUTH), and where each command's reply is in its answer.
class setup_plan {
public:
    explicit setup_plan(const connection_config& cfg);

    [[nodiscard]] const resp::request& request() const noexcept { return request_; }

    /// A refused SELECT, CLIENT SETNAME, INFO or SCRIPT LOAD fails the handshake (auth_failed
    /// when the ACL refused it), and so does a SCRIPT LOAD whose SHA-1 is not the one embedded:
    /// every EVALSHA would miss. The caller's setup commands may fail: their replies are theirs.
    /// With require_master, a ROLE that is not "master" fails it with master_not_found.
    [[nodiscard]] handshake_failure check(const std::vector<resp::value>& replies,
                                          const std::string& node) const;
    /// The replies of the caller's setup commands, in order.
    [[nodiscard]] std::vector<resp::value> setup_replies(const std::vector<resp::value>& replies) const;
    /// INFO server's text; empty if the plan has no INFO.
    [[nodiscard]] std::string server_info(const std::vector<resp::value>& replies) const;

private:
    const connection_config& cfg_;
    resp::request request_;
    std::vector<std::string> names_;  // each command's name, for messages
    std::size_t info_index_ = 0;
    bool has_info_ = false;
    std::size_t role_index_ = 0;
    bool has_role_ = false;
    std::size_t first_extra_ = 0;
    std::size_t extras_ = 0;
    std::size_t first_script_ = 0;
};

}  // namespace redlock::redis::detail

#endif
