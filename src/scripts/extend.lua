-- SPDX-License-Identifier: BSL-1.0
-- extend.lua: give our lease a new ttl; never recreates a missing key, never shortens it (GT: an
-- extend with a short ttl delivered late, after one with a long ttl, must not cut the hold below
-- the validity the long one gave its holder).
-- KEYS[1]  lock key   "{<prefix><resource>}:lock"
-- ARGV[1]  owner token
-- ARGV[2]  new ttl in milliseconds
-- returns  1  extended: the key lives at least ttl from now
--          0  the key is missing or holds another token: the lease is no longer ours
-- pcall: a reentrant lock's hash at the key answers WRONGTYPE, which means "not ours".
if redis.pcall('GET', KEYS[1]) == ARGV[1] then
    redis.call('PEXPIRE', KEYS[1], ARGV[2], 'GT')
    return 1
end
return 0
