-- SPDX-License-Identifier: BSL-1.0
-- release.lua: delete the lock only if it holds our token, and tell waiters.
-- KEYS[1]  lock key          "{<prefix><resource>}:lock"
-- KEYS[2]  released channel  "{<prefix><resource>}:released", also the sorted set of the
--                             clients waiting on it (parts/wake_one.lua)
-- ARGV[1]  owner token
-- ARGV[2]  optional: "quiet" deletes without publishing (a failed acquire cleaning up: nobody
--          held the lock, so no waiter should be woken by it)
-- returns  1  released (and published on KEYS[2])
--          0  the key is missing or holds another token: nothing was deleted
-- include: wake_one.lua
-- pcall: a reentrant lock's hash at the key answers WRONGTYPE, which means "not ours".
if redis.pcall('GET', KEYS[1]) == ARGV[1] then
    redis.call('DEL', KEYS[1])
    if ARGV[2] ~= 'quiet' then
        publish_release(KEYS[2], ARGV[1])
    end
    return 1
end
return 0
