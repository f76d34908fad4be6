-- SPDX-License-Identifier: BSL-1.0
-- handover.lua: client::async_adopt makes the adopter the only holder of a lease written out by
-- lease::handover: where the hold is the first lease's token, it becomes the adopter's own
-- (compare-and-set), so nothing the first lease does afterwards (release, drop, renewals)
-- matches it. A reentrant hold's owner becomes the adopter's, so that the first process,
-- acquiring again under its owner, is refused like anyone else rather than re-entering the
-- adopter's hold; a hold its owner re-entered is not handed over (its inner holds would stay
-- the first process's). The expiry never shrinks (as extend.lua): the first lease's validity,
-- until it learns of the hand-over, stays within the hold. A failed adoption calls it again
-- the other way round, to give the hold back.
-- KEYS     'string':    the lock keys (a plain or fair lock's one; a lock over several
--                       resources: every one of this node's, all or none)
--          'reentrant': the lock key (a hash, acquire_reentrant.lua)
--          'permit':    the semaphore (a sorted set, semaphore_acquire.lua)
--          'rw':        the holders "{<prefix><resource>}:lock", the modes "{...}:rw"
-- ARGV[1]  the shape of the hold: 'string', 'reentrant', 'permit' or 'rw'
-- ARGV[2]  the token that holds now (the first lease's)
-- ARGV[3]  the token that is to hold (the adopter's)
-- ARGV[4]  ttl in milliseconds: the hold lives at least that long from now
-- ARGV[5]  'reentrant', 'rw': the owner id that holds now ("" for a read-write hold without one)
-- ARGV[6]  'reentrant', 'rw': the owner id that is to hold
-- returns  1  the hold is ARGV[3]'s now
--          0  ARGV[2] holds nothing here (expired, released, adopted already): nothing changed
--         -1  the owner holds more than this one acquisition here (re-entered): nothing changed
-- pcall: another kind's key answers WRONGTYPE, which means "not ours".
local shape, from, to, ttl = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])

-- The expiry is written out with every hold, never kept (SET KEEPTTL) nor left to a
-- conditional PEXPIRE: a replica that lacks the key (a grant lost to asynchronous replication,
-- its master cut off) would make it without one from the write alone and, promoted, hold the
-- lock for good. It never shrinks: the longer of what the key has left and the adoption's ttl.
local function at_least(key)
    return math.max(redis.call('PTTL', key), ttl)
end

local function server_now()
    local time = redis.call('TIME')
    return tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end

if shape == 'string' then
    for i = 1, #KEYS do
        if redis.pcall('GET', KEYS[i]) ~= from then
            return 0
        end
    end
    for i = 1, #KEYS do
        redis.call('SET', KEYS[i], to, 'PX', at_least(KEYS[i]))
    end
    return 1
end

if shape == 'reentrant' then
    if redis.call('TYPE', KEYS[1]).ok ~= 'hash' or redis.call('HGET', KEYS[1], 'o') ~= ARGV[5] or
        redis.call('HEXISTS', KEYS[1], 'a:' .. from) == 0 then
        return 0
    end
    -- The fields: "o", "f" when fenced, one "a:<token>" per acquisition (acquire_reentrant.lua).
    if redis.call('HLEN', KEYS[1]) - 1 - redis.call('HEXISTS', KEYS[1], 'f') > 1 then
        return -1
    end
    redis.call('HDEL', KEYS[1], 'a:' .. from)
    redis.call('HSET', KEYS[1], 'a:' .. to, 1, 'o', ARGV[6])
    redis.call('PEXPIRE', KEYS[1], at_least(KEYS[1]))
    return 1
end

-- A permit or a read-write hold: a member of a sorted set scored by its expiry (server time).
local expiry = redis.pcall('ZSCORE', KEYS[1], from)
if type(expiry) ~= 'string' then
    return 0
end
local now = server_now()
if tonumber(expiry) <= now then
    return 0
end
local until_ms = math.max(tonumber(expiry), now + ttl)
if shape == 'permit' then
    redis.call('ZREM', KEYS[1], from)
    redis.call('ZADD', KEYS[1], until_ms, to)
    -- The key lives as long as its longest permit (semaphore_extend.lua).
    redis.call('PEXPIRE', KEYS[1], at_least(KEYS[1]))
    return 1
end
if shape ~= 'rw' then
    return redis.error_reply('handover.lua: unknown shape ' .. tostring(shape))
end
local mode = redis.call('HGET', KEYS[2], from)
if not mode then
    return 0
end
-- "<r|w> <fence> <owner>" (rw_acquire.lua): the owner's other holds go with this one, or none does.
local owner = ARGV[5] or ''
if owner ~= '' then
    local held = redis.call('HGETALL', KEYS[2])
    for i = 1, #held, 2 do
        local until_then = held[i] ~= from and redis.call('ZSCORE', KEYS[1], held[i])
        if until_then and tonumber(until_then) > now and string.match(held[i + 1], '^%S+ %S+ (.*)$') == owner then
            return -1
        end
    end
    mode = string.match(mode, '^(%S+ %S+ )') .. (ARGV[6] or '')
end
redis.call('ZREM', KEYS[1], from)
redis.call('HDEL', KEYS[2], from)
redis.call('ZADD', KEYS[1], until_ms, to)
redis.call('HSET', KEYS[2], to, mode)
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')[2]
redis.call('PEXPIREAT', KEYS[1], last)
redis.call('PEXPIREAT', KEYS[2], last)
return 1
