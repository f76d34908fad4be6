-- semaphore_release.lua: give back our permit of a semaphore, and tell one waiter.
-- KEYS[1]  semaphore          "{<prefix><resource>}:lock"
-- KEYS[2]  permit count       "{<prefix><resource>}:permits"
-- KEYS[3]  released channel   "{<prefix><resource>}:released"
-- ARGV[1]  token
-- ARGV[2]  optional: "quiet" gives it back without publishing (a failed acquire cleaning up)
-- returns  1  released (and published on KEYS[3])
--          0  no such permit, or it had expired (no longer ours): nothing to give back
if redis.call('TYPE', KEYS[1]).ok ~= 'zset' then
    return 0
end
local expiry = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not expiry then
    return 0
end
redis.call('ZREM', KEYS[1], ARGV[1])
if redis.call('EXISTS', KEYS[1]) == 0 then
    redis.call('DEL', KEYS[2])
end
local time = redis.call('TIME')
if tonumber(expiry) <= tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000) then
    return 0
end
if ARGV[2] ~= 'quiet' then
    redis.call('SPUBLISH', KEYS[3], ARGV[1])
end
return 1
