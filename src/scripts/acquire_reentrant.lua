-- SPDX-License-Identifier: BSL-1.0
-- acquire_reentrant.lua: take or re-enter a reentrant lock.
-- The lock is a hash: field "o" holds the owner id, field "f" (fenced locks only) the fence of
-- the hold, and each acquisition that holds it has a field "a:<token>". Its depth is the
-- number of acquisition fields. A field per acquisition, not a counter, makes every call
-- idempotent: a retried or duplicated acquire or release of one acquisition counts once, which
-- keeps the N nodes of a Redlock exact when replies are lost.
-- KEYS[1]  lock key       "{<prefix><resource>}:lock"
-- KEYS[2]  optional: the fence counter "{<prefix><resource>}:fence" (a fenced lock)
-- ARGV[1]  owner id
-- ARGV[2]  token of this acquisition
-- ARGV[3]  ttl in milliseconds
-- ARGV[4]  optional: the token of this acquisition's previous round, whose field (if its cleanup
--          has not arrived) this call removes: one acquisition counts once
-- returns  n >= 1  held by this owner, n acquisitions deep (this one included)
--          -p      held by another owner, or by a plain (non-reentrant) lock, for p more ms
--                  (at least 1; a waiter sleeps at most that long)
--          0       held by another owner, with no expiry
--          fenced: {that number, the hold's fence (0 if refused), 1 if the fence was numbered
--          by this call (a new hold here), else 0 (re-entered: the fence of the outer hold)}
local fenced = KEYS[2] ~= nil
local kind = redis.call('TYPE', KEYS[1]).ok
local function answer(n, fence, numbered)
    if fenced then
        return {n, fence, numbered}
    end
    return n
end
if kind == 'none' then
    redis.call('HSET', KEYS[1], 'o', ARGV[1], 'a:' .. ARGV[2], 1)
    redis.call('PEXPIRE', KEYS[1], ARGV[3])
    if fenced then
        local fence = redis.call('INCR', KEYS[2])
        redis.call('HSET', KEYS[1], 'f', fence)
        return answer(1, fence, 1)
    end
    return 1
end
if kind ~= 'hash' or redis.call('HGET', KEYS[1], 'o') ~= ARGV[1] then
    local left = redis.call('PTTL', KEYS[1])
    if left == -1 then
        return answer(0, 0, 0)
    end
    return answer(-math.max(left, 1), 0, 0)
end
if ARGV[4] ~= nil then
    redis.call('HDEL', KEYS[1], 'a:' .. ARGV[4])
end
redis.call('HSETNX', KEYS[1], 'a:' .. ARGV[2], 1)
-- Re-entering never shortens what the outer acquisitions were promised. The expiry is written
-- even where it does not change: a replica that lacks the hash (lost to asynchronous
-- replication) makes it from the HSETNX alone, and, promoted, would hold the lock for good.
redis.call('PEXPIRE', KEYS[1], math.max(redis.call('PTTL', KEYS[1]), tonumber(ARGV[3])))
local depth = redis.call('HLEN', KEYS[1]) - 1 - redis.call('HEXISTS', KEYS[1], 'f')
if not fenced then
    return depth
end
local fence = tonumber(redis.call('HGET', KEYS[1], 'f'))
if fence then
    return answer(depth, fence, 0)
end
-- Held by an unfenced acquisition of ours: from now on the hold has a fence.
fence = redis.call('INCR', KEYS[2])
redis.call('HSET', KEYS[1], 'f', fence)
return answer(depth, fence, 1)
