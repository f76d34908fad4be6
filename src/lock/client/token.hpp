// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_LOCK_CLIENT_TOKEN_HPP
#define REDLOCK_LOCK_CLIENT_TOKEN_HPP

#include <string>
#include <string_view>

namespace redlock::detail {

/// 128 bits from the OS CSPRNG (getrandom(2), else /dev/urandom), as 32 lowercase hex digits.
/// The OS's bytes are read 512 at a time into a per-thread pool; a fork (pthread_atfork) makes
/// the child read fresh ones, so parent and child never share a token.
/// Only the holder of a token can extend or release the lock it names, so it must not be
/// guessable: never a counter, a thread id or a std::mt19937 output.
/// Throws std::system_error if the OS has no randomness to give (no getrandom, no /dev/urandom).
std::string make_token();

/// make_token() and, when `identity` is not empty, 'x' and `identity` hex-encoded: who holds by
/// this token (holder_identity_text), for operators (identity_of, `redlock inspect`). Hex keeps
/// the token in the alphabet every script, key and channel name already takes: no separator
/// that a script splits on ('.', ':', ' ') can appear in it. The 128 random bits stay first.
std::string make_token(std::string_view identity);

/// "<host>\n<pid>\n<label>", the identity a client records in its tokens (at most 64 bytes
/// of the host name, 64 of the label).
std::string holder_identity_text(std::string_view host, long pid, std::string_view label);

}  // namespace redlock::detail

#endif
