-- SPDX-License-Identifier: BSL-1.0
-- semaphore_extend.lua: give our permit a new ttl; never gives back an expired one, never shortens
-- it (ZADD GT: a late extend with a short ttl must not free the permit early).
-- KEYS[1]  semaphore      "{<prefix><resource>}:lock" (semaphore_acquire.lua)
-- ARGV[1]  token
-- ARGV[2]  new ttl in milliseconds
-- returns  1  extended
--          0  no such permit, or it had expired: the lease is no longer ours
-- pcall: any other kind's key answers WRONGTYPE, which means "not ours".
local expiry = redis.pcall('ZSCORE', KEYS[1], ARGV[1])
if type(expiry) ~= 'string' then
    return 0
end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
if tonumber(expiry) <= now then
    return 0
end
redis.call('ZADD', KEYS[1], 'XX', 'GT', now + tonumber(ARGV[2]), ARGV[1])
-- GT: the key lives as long as its longest permit (PTTL -1: a set written by hand, never
-- given an expiry, which GT takes as infinite).
if redis.call('PEXPIRE', KEYS[1], ARGV[2], 'GT') == 0 and redis.call('PTTL', KEYS[1]) == -1 then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 1
