-- fence_writeback.lua: raise a node's fence counter to the fence a Redlock grant settled on (the
-- largest of its quorum), while our token still holds the lock there. Once a quorum of nodes
-- has a counter at least that high, any later grant's quorum shares a node with them, whose
-- INCR numbers it higher.
-- KEYS[1]  lock key       "{<prefix><resource>}:lock"
-- KEYS[2]  fence counter  "{<prefix><resource>}:fence"
-- ARGV[1]  token
-- ARGV[2]  the fence
-- returns  1  the lock holds our token and the counter is at least the fence
--          0  the lock no longer holds our token: nothing changed
if redis.pcall('GET', KEYS[1]) ~= ARGV[1] then
    return 0
end
if tonumber(redis.call('GET', KEYS[2]) or '0') < tonumber(ARGV[2]) then
    redis.call('SET', KEYS[2], ARGV[2])
end
return 1
