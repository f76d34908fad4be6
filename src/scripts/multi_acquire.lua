-- multi_acquire.lua: take the locks of several resources at once, all or none. One script
-- per node sees every key free (or ours) before it writes any, so two acquisitions never
-- hold part of what each other wants on a node: no order among the names, no deadlock.
-- KEYS[1..n]  the resources' lock keys "{<prefix><resource>}:lock"
-- ARGV[1]     token
-- ARGV[2]     ttl in milliseconds
-- ARGV[3]     optional: the token of this acquisition's previous round (whose cleanup has not
--             arrived): keys holding it are ours
-- returns  {1, 0}         granted: every key holds the token, with the ttl from now
--          {0, pttl, i}   KEYS[i] is held by another (pttl: its remaining ms, -1 without
--                         expiry); nothing was written
-- pcall: another kind's key (a hash, a sorted set) answers WRONGTYPE: held, and not by us.
for i = 1, #KEYS do
    local holder = redis.pcall('GET', KEYS[i])
    if holder ~= false and holder ~= ARGV[1] and (ARGV[3] == nil or holder ~= ARGV[3]) then
        return {0, redis.call('PTTL', KEYS[i]), i}
    end
end
for i = 1, #KEYS do
    redis.call('SET', KEYS[i], ARGV[1], 'PX', ARGV[2])
end
return {1, 0}
