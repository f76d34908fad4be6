-- semaphore_acquire.lua: take one of a semaphore's permits (lock_options::permits).
-- The semaphore is a sorted set: one member per permit holder (its token), scored by the server
-- time (ms) at which the permit expires, so a dead holder's permit comes back after its ttl
-- without anyone releasing it. The key and the count expire with the last permit.
-- KEYS[1]  semaphore      "{<prefix><resource>}:lock"
-- KEYS[2]  permit count   "{<prefix><resource>}:permits"
-- KEYS[3]  read-write modes "{<prefix><resource>}:rw": present, the sorted set is a
--          read-write lock's holders, not permits
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
local kind = redis.call('TYPE', KEYS[1]).ok
if (kind ~= 'zset' and kind ~= 'none') or redis.call('EXISTS', KEYS[3]) == 1 then
    return {0, redis.call('PTTL', KEYS[1])}
end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local permits = tonumber(ARGV[3])
local known = tonumber(redis.call('GET', KEYS[2]))
if known and known ~= permits and redis.call('ZCARD', KEYS[1]) > 0 then
    return {-1, known}
end
if ARGV[4] then
    redis.call('ZREM', KEYS[1], ARGV[4])
end
if redis.call('ZSCORE', KEYS[1], ARGV[1]) or redis.call('ZCARD', KEYS[1]) < permits then
    redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
    local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')[2]
    redis.call('PEXPIREAT', KEYS[1], last)
    redis.call('SET', KEYS[2], permits, 'PXAT', last)
    return {1, 0}
end
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')[2]
return {0, math.max(1, tonumber(first) - now)}
