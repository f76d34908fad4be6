-- SPDX-License-Identifier: BSL-1.0
-- rw_extend.lua: give our hold of a read-write lock a new ttl; never revives an expired one, never
-- shortens it (ZADD GT: a late extend with a short ttl must not end a writer's hold early).
-- KEYS[1]  holders  "{<prefix><resource>}:lock"
-- KEYS[2]  modes    "{<prefix><resource>}:rw"
-- ARGV[1]  token
-- ARGV[2]  new ttl in milliseconds
-- returns  1  extended
--          0  no such hold, or it had expired: the lease is no longer ours
if redis.call('TYPE', KEYS[1]).ok ~= 'zset' or redis.call('HEXISTS', KEYS[2], ARGV[1]) == 0 then
    return 0
end
local expiry = redis.call('ZSCORE', KEYS[1], ARGV[1])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
if not expiry or tonumber(expiry) <= now then
    return 0
end
redis.call('ZADD', KEYS[1], 'XX', 'GT', now + tonumber(ARGV[2]), ARGV[1])
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')[2]
redis.call('PEXPIREAT', KEYS[1], last)
redis.call('PEXPIREAT', KEYS[2], last)
return 1
