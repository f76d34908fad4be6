-- SPDX-License-Identifier: BSL-1.0
-- rw_release.lua: give back our hold of a read-write lock, or a waiting writer's mark, and
-- wake the resource's waiters.
-- KEYS[1]  holders           "{<prefix><resource>}:lock"
-- KEYS[2]  modes             "{<prefix><resource>}:rw"
-- KEYS[3]  waiting writers   "{<prefix><resource>}:rw:waiting"
-- KEYS[4]  released channel  "{<prefix><resource>}:released"
-- ARGV[1]  token
-- ARGV[2]  optional: "quiet", the hold only, without publishing (a round's cleanup, whose
--          acquisition waits on); "leave", the hold and the mark (an acquisition's end),
--          publishing only if the mark was the last one; "unmark", the mark only (a writer
--          whose round won elsewhere: it holds the lock, so nobody is woken)
-- returns  1  released (and published on KEYS[4])
--          0  no such hold, or it had expired (no longer ours): nothing to give back
-- The message ("shared <token>") wakes every waiter: readers may all get in.
if ARGV[2] == 'unmark' then
    redis.call('ZREM', KEYS[3], ARGV[1])
    return 0
end
local quiet = ARGV[2] == 'quiet'
local unmarked = not quiet and redis.call('ZREM', KEYS[3], ARGV[1]) == 1 and
                     redis.call('ZCARD', KEYS[3]) == 0
local function done(released)
    if (ARGV[2] == nil and released == 1) or unmarked then
        redis.call('SPUBLISH', KEYS[4], 'shared ' .. ARGV[1])
    end
    return released
end
if redis.call('TYPE', KEYS[1]).ok ~= 'zset' then
    return done(0)
end
local expiry = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not expiry or redis.call('HDEL', KEYS[2], ARGV[1]) == 0 then
    return done(0)
end
redis.call('ZREM', KEYS[1], ARGV[1])
if redis.call('EXISTS', KEYS[1]) == 0 then
    redis.call('DEL', KEYS[2])
end
local time = redis.call('TIME')
if tonumber(expiry) <= tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000) then
    return done(0)
end
return done(1)
