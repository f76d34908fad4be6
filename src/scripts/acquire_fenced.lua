-- SPDX-License-Identifier: BSL-1.0
-- acquire_fenced.lua: take a plain lock and number the grant with the resource's fence counter.
-- The counter has no expiry: it must outlive every lease (persistence keeps it across restarts).
-- KEYS[1]  lock key       "{<prefix><resource>}:lock"
-- KEYS[2]  fence counter  "{<prefix><resource>}:fence"
-- ARGV[1]  token
-- ARGV[2]  ttl in milliseconds
-- ARGV[3]  optional: the token of this acquisition's previous round
-- returns  {1, fence}  granted; fence: this grant's number (the counter after INCR)
--          {1, fence}  the key already held our token, or the previous round's (whose cleanup
--                      has not arrived): ours now, with a fresh ttl from now, and the counter
--                      as it is (the last grant numbered was that one)
--          {0, pttl}   held by another token (pttl: its remaining ms, -1 without expiry)
-- pcall: a reentrant lock's hash at the key answers WRONGTYPE: held, and not by us.
local holder = redis.pcall('GET', KEYS[1])
if holder == false then
    redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
    return {1, redis.call('INCR', KEYS[2])}
end
if holder == ARGV[1] or (ARGV[3] ~= nil and holder == ARGV[3]) then
    redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
    return {1, tonumber(redis.call('GET', KEYS[2]) or '0')}
end
return {0, redis.call('PTTL', KEYS[1])}
