-- SPDX-License-Identifier: BSL-1.0
-- semaphore_acquire.lua: take one of a semaphore's permits (lock_options::permits).
-- The semaphore is one sorted set: a member per permit holder (its token), scored by the server
-- time (ms) at which the permit expires, so a dead holder's permit comes back after its ttl
-- without anyone releasing it; and the member "#permits", scored -K, so that callers who
-- disagree on K are told. The key expires with its last permit. The uncontended path (no key
-- yet) is four calls: every call inside a script costs the server as much as a whole command.
-- KEYS[1]  semaphore        "{<prefix><resource>}:lock"
-- KEYS[2]  read-write modes "{<prefix><resource>}:rw": present, the sorted set is a read-write
--          lock's holders, not permits
-- ARGV[1]  token
-- ARGV[2]  ttl in milliseconds
-- ARGV[3]  permits: how many holders at once
-- ARGV[4]  optional: the token of this acquisition's previous round, whose permit (if its
--          cleanup has not arrived) this call gives back: one acquisition holds one permit
-- returns  {1, 0}     granted, or already held by ARGV[1] (a retry): expires ttl from now
--          {0, pttl}  every permit taken (pttl: ms until the first of them expires, >= 1), or
--                     the key holds another kind of lock, a read-write lock too (its PTTL,
--                     -1 without expiry)
--          {-1, k}    permits are in use under another count, k: callers disagree on it
-- pcall: any other kind's key answers WRONGTYPE.
local members = redis.pcall('ZCARD', KEYS[1])
if type(members) ~= 'number' then
    return {0, redis.call('PTTL', KEYS[1])}
end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local ttl, permits = tonumber(ARGV[2]), tonumber(ARGV[3])
if members == 0 then
    redis.call('ZADD', KEYS[1], now + ttl, ARGV[1], -permits, '#permits')
    redis.call('PEXPIRE', KEYS[1], ttl)
    return {1, 0}
end
-- A semaphore's set always has its count, so only a set without one may be a read-write lock's
-- holders. (ZMSCORE would read our own permit in the same call, but it is not in docs/acl.md's
-- user: an upgrade would refuse every such user's contended acquire.)
local known = redis.call('ZSCORE', KEYS[1], '#permits')
if not known and redis.call('EXISTS', KEYS[2]) == 1 then
    return {0, redis.call('PTTL', KEYS[1])}
end
local held = members
if known then
    known = -tonumber(known)
    held = held - 1
end
-- The count sorts first (scored -K); the permit that lapses first comes next. Only when it has
-- lapsed is there anything to remove: a refusal then costs five calls, not seven.
local function first_expiry()
    return redis.call('ZRANGEBYSCORE', KEYS[1], 0, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)[2]
end
local first = first_expiry()
if first and tonumber(first) <= now then
    held = held - redis.call('ZREMRANGEBYSCORE', KEYS[1], 0, now)
    first = nil
end
if ARGV[4] and redis.call('ZREM', KEYS[1], ARGV[4]) == 1 then
    held = held - 1
    first = nil
end
if known and known ~= permits and held > 0 then
    return {-1, known}
end
-- Our own permit, if it is still here, has not lapsed.
if held >= permits and not redis.call('ZSCORE', KEYS[1], ARGV[1]) then
    first = first or first_expiry()
    return {0, first and math.max(1, tonumber(first) - now) or 1}
end
redis.call('ZADD', KEYS[1], now + ttl, ARGV[1], -permits, '#permits')
-- The key lives as long as its longest permit. The expiry is written even where it does not
-- change (never a PEXPIRE GT that may do nothing): a replica that lacks the set (lost to
-- asynchronous replication) makes it from the ZADD alone, and needs it. PTTL -1, a set written
-- by hand without an expiry, gets this permit's.
redis.call('PEXPIRE', KEYS[1], math.max(redis.call('PTTL', KEYS[1]), ttl))
return {1, 0}
