-- SPDX-License-Identifier: BSL-1.0
-- fence_writeback.lua: raise a node's fence counter to the fence a Redlock grant settled on (the
-- largest of its quorum), while our acquisition still holds the lock there. Once a quorum of
-- nodes has a counter at least that high, any later grant's quorum shares a node with them,
-- whose INCR numbers it higher. A reentrant hold also records the fence in its hash (field
-- "f"), so that its re-entries are numbered with it. A read-write lock's writer holds it when
-- its token is among the holders.
-- KEYS[1]  lock key       "{<prefix><resource>}:lock"
-- KEYS[2]  fence counter  "{<prefix><resource>}:fence"
-- ARGV[1]  token (of the acquisition, for a reentrant lock)
-- ARGV[2]  the fence
-- ARGV[3]  optional: the owner id of a reentrant lock
-- returns  1  the lock holds our acquisition and the counter is at least the fence
--          0  the lock no longer holds it: nothing changed
if redis.call('TYPE', KEYS[1]).ok == 'zset' then
    if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then
        return 0
    end
elseif ARGV[3] == nil then
    if redis.pcall('GET', KEYS[1]) ~= ARGV[1] then
        return 0
    end
else
    if redis.call('TYPE', KEYS[1]).ok ~= 'hash' or redis.call('HGET', KEYS[1], 'o') ~= ARGV[3] or
        redis.call('HEXISTS', KEYS[1], 'a:' .. ARGV[1]) == 0 then
        return 0
    end
    redis.call('HSET', KEYS[1], 'f', ARGV[2])
    -- The expiry is written again with the field: a replica that lacks the hash (lost to
    -- asynchronous replication) makes it from the HSET alone, and, promoted, would hold the
    -- lock for good.
    local left = redis.call('PTTL', KEYS[1])
    if left > 0 then
        redis.call('PEXPIRE', KEYS[1], left)
    end
end
if tonumber(redis.call('GET', KEYS[2]) or '0') < tonumber(ARGV[2]) then
    redis.call('SET', KEYS[2], ARGV[2])
end
return 1
