-- SPDX-License-Identifier: BSL-1.0
-- multi_acquire.lua: take the locks of several resources at once, all or none. One script
-- per node sees every key free (or ours) before it writes any, so two acquisitions never
-- hold part of what each other wants on a node: no order among the names, no deadlock.
-- KEYS[1..n]     the resources' lock keys "{<prefix><resource>}:lock"
-- KEYS[n+1..2n]  fenced only: their fence counters "{<prefix><resource>}:fence", same order
-- ARGV[1]        token
-- ARGV[2]        ttl in milliseconds
-- ARGV[3]        "fenced" (KEYS holds the counters) or "plain"
-- ARGV[4]        optional: the token of this acquisition's previous round (whose cleanup has
--                not arrived): keys holding it are ours
-- returns  {1, 0}              granted, plain: every key holds the token, with the ttl from now
--          {1, f1, ..., fn}    granted, fenced: fi numbers the grant of resource i (its counter
--                              after INCR; as it is where the key already held our token)
--          {0, pttl, i}        KEYS[i] is held by another (pttl: its remaining ms, -1 without
--                              expiry); nothing was written
-- pcall: another kind's key (a hash, a sorted set) answers WRONGTYPE: held, and not by us.
local fenced = ARGV[3] == 'fenced'
local n = fenced and #KEYS / 2 or #KEYS
local ours = {}
for i = 1, n do
    local holder = redis.pcall('GET', KEYS[i])
    if holder ~= false and holder ~= ARGV[1] and (ARGV[4] == nil or holder ~= ARGV[4]) then
        return {0, redis.call('PTTL', KEYS[i]), i}
    end
    ours[i] = holder ~= false
end
local reply = {1}
for i = 1, n do
    redis.call('SET', KEYS[i], ARGV[1], 'PX', ARGV[2])
    if fenced then
        if ours[i] then
            reply[i + 1] = tonumber(redis.call('GET', KEYS[n + i]) or '0')
        else
            reply[i + 1] = redis.call('INCR', KEYS[n + i])
        end
    end
end
if not fenced then
    reply[2] = 0
end
return reply
