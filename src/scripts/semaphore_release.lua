-- SPDX-License-Identifier: BSL-1.0
-- semaphore_release.lua: give back our permit of a semaphore, and tell one waiter.
-- KEYS[1]  semaphore          "{<prefix><resource>}:lock" (semaphore_acquire.lua)
-- KEYS[2]  released channel   "{<prefix><resource>}:released", also the sorted set of the
--                              clients waiting on it (parts/wake_one.lua)
-- ARGV[1]  token
-- ARGV[2]  optional: "quiet" gives it back without publishing (a failed acquire cleaning up)
-- returns  1  released (and published on KEYS[2])
--          0  no such permit, or it had expired (no longer ours): nothing to give back
-- include: wake_one.lua
-- pcall: any other kind's key answers WRONGTYPE, which means "not ours".
local expiry = redis.pcall('ZSCORE', KEYS[1], ARGV[1])
if type(expiry) ~= 'string' then
    return 0
end
-- The last permit takes the count ("#permits") with it: a free semaphore leaves no key.
if redis.call('ZCARD', KEYS[1]) <= 2 then
    redis.call('DEL', KEYS[1])
else
    redis.call('ZREM', KEYS[1], ARGV[1])
end
local time = redis.call('TIME')
if tonumber(expiry) <= tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000) then
    return 0
end
if ARGV[2] ~= 'quiet' then
    publish_release(KEYS[2], ARGV[1])
end
return 1
