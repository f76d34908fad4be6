// SPDX-License-Identifier: BSL-1.0
#ifndef REDLOCK_LOCK_TOKEN_HPP
#define REDLOCK_LOCK_TOKEN_HPP

#include <string>

namespace redlock::detail {

/// 128 bits from the OS CSPRNG (getrandom(2), else /dev/urandom), as 32 lowercase hex digits.
/// The OS's bytes are read 512 at a time into a per-thread pool; a fork (pthread_atfork) makes
/// the child read fresh ones, so parent and child never share a token.
/// Only the holder of a token can extend or release the lock it names, so it must not be
/// guessable: never a counter, a thread id or a std::mt19937 output.
/// Throws std::system_error if the OS has no randomness to give (no getrandom, no /dev/urandom).
std::string make_token();

}  // namespace redlock::detail

#endif
