-- acquire.lua: take the lock if it is free, or confirm it if it already holds our token.
-- KEYS[1]  lock key   "{<prefix><resource>}:lock"
-- ARGV[1]  owner token (32 hex chars)
-- ARGV[2]  ttl in milliseconds
-- returns  {1, ttl}   acquired now, or already held by ARGV[1] (a retried request whose
--                     first reply was lost): the ttl is set to ARGV[2] in both cases
--          {0, pttl}  held by someone else; pttl is what is left of their lease
local holder = redis.call('GET', KEYS[1])
if holder == false or holder == ARGV[1] then
    redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
    return {1, tonumber(ARGV[2])}
end
return {0, redis.call('PTTL', KEYS[1])}
