-- acquire_reentrant.lua: take or re-enter a reentrant lock.
-- The lock is a hash: field "o" holds the owner id, and each acquisition that holds it has a
-- field "a:<token>". Its depth is the number of acquisitions (HLEN - 1). A field per acquisition,
-- not a counter, makes every call idempotent: a retried or duplicated acquire or release of one
-- acquisition counts once, which keeps the N nodes of a Redlock exact when replies are lost.
-- KEYS[1]  lock key   "{<prefix><resource>}:lock"
-- ARGV[1]  owner id
-- ARGV[2]  token of this acquisition
-- ARGV[3]  ttl in milliseconds
-- returns  n >= 1  held by this owner, n acquisitions deep (this one included)
--          -p      held by another owner, or by a plain (non-reentrant) lock, for p more ms
--                  (at least 1; a waiter sleeps at most that long)
--          0       held by another owner, with no expiry
local kind = redis.call('TYPE', KEYS[1]).ok
if kind == 'none' then
    redis.call('HSET', KEYS[1], 'o', ARGV[1], 'a:' .. ARGV[2], 1)
    redis.call('PEXPIRE', KEYS[1], ARGV[3])
    return 1
end
if kind ~= 'hash' or redis.call('HGET', KEYS[1], 'o') ~= ARGV[1] then
    local left = redis.call('PTTL', KEYS[1])
    if left == -1 then
        return 0
    end
    return -math.max(left, 1)
end
redis.call('HSETNX', KEYS[1], 'a:' .. ARGV[2], 1)
-- Re-entering never shortens what the outer acquisitions were promised.
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[3]) then
    redis.call('PEXPIRE', KEYS[1], ARGV[3])
end
return redis.call('HLEN', KEYS[1]) - 1
