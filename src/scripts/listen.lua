-- SPDX-License-Identifier: BSL-1.0
-- listen.lua: a client's entry in the list of those waiting on a channel, whose releases name
-- one of them to wake (parts/wake_one.lua).
-- KEYS[1]  the channel, "{<prefix><resource>}:released"; the list is the sorted set of that name
-- ARGV[1]  the client's id (release_listener: 32 hex digits)
-- ARGV[2]  "join": listed for ARGV[3] ms from now (again: the time is renewed);
--          "leave": no longer listed;
--          "pass": no longer listed, and the release whose token is ARGV[3] named this client,
--          which no longer waits: it names another listed client in its stead and publishes
--          that (by the same token, so the nodes of a Redlock name the same one again)
-- returns  1
-- include: wake_one.lua
-- The client's entry, whatever its time, goes first: its score is its id's.
local score = listed_score(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], score, score)
if ARGV[2] == 'join' then
    local time = redis.call('TIME')
    local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
    redis.call('ZADD', KEYS[1], score, ARGV[1] .. ' ' .. (now + tonumber(ARGV[3])))
    -- The list lives as long as its longest entry: a client that crashed leaves nothing behind.
    if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[3]) then
        redis.call('PEXPIRE', KEYS[1], ARGV[3])
    end
elseif ARGV[2] == 'pass' and redis.call('EXISTS', KEYS[1]) == 1 then
    publish_release(KEYS[1], ARGV[3])
end
return 1
