-- SPDX-License-Identifier: BSL-1.0
-- inspect.lua: what holds a resource on this node, for operators (client::async_inspect).
-- Reads only; every kind of lock, told apart by the lock key's type.
-- KEYS[1]  lock key         "{<prefix><resource>}:lock"
-- KEYS[2]  fence counter    "{<prefix><resource>}:fence"
-- KEYS[3]  fair queue       "{<prefix><resource>}:queue"
-- KEYS[4]  read-write modes "{<prefix><resource>}:rw"
-- KEYS[5]  waiting writers  "{<prefix><resource>}:rw:waiting"
-- returns  {type, pttl, fence, queued, permits, holder, ...}
--          type: the lock key's ("none", "string": a plain or fair lock, "hash": reentrant,
--          "zset": a semaphore, "rw": a read-write lock); pttl: the key's (-2 none, -1 no
--          expiry); fence: the counter (0 without one); queued: fair waiters, or a read-write
--          lock's waiting writers; permits: a semaphore's count (0 otherwise);
--          holders: a plain or fair lock's value; a reentrant lock's owner, then its
--          acquisitions' tokens; a semaphore's live permits' tokens; a read-write lock's live
--          holds, each "r <token>" or "w <token>"
local kind = redis.call('TYPE', KEYS[1]).ok
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local fence = tonumber(redis.pcall('GET', KEYS[2])) or 0
local queued = redis.pcall('ZCARD', KEYS[3])
if type(queued) ~= 'number' then
    queued = 0
end
local rw = kind == 'zset' and redis.call('EXISTS', KEYS[4]) == 1
if rw or redis.call('TYPE', KEYS[5]).ok == 'zset' then
    queued = queued + #redis.call('ZRANGEBYSCORE', KEYS[5], '(' .. now, '+inf')
end
local out = {kind, redis.call('PTTL', KEYS[1]), fence, queued, 0}
if kind == 'string' then
    out[6] = redis.call('GET', KEYS[1])
elseif kind == 'hash' then
    out[6] = redis.call('HGET', KEYS[1], 'o') or ''
    for _, field in ipairs(redis.call('HKEYS', KEYS[1])) do
        if string.sub(field, 1, 2) == 'a:' then
            out[#out + 1] = string.sub(field, 3)
        end
    end
elseif rw then
    out[1] = 'rw'
    for _, token in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. now, '+inf')) do
        local mode = string.sub(redis.call('HGET', KEYS[4], token) or 'r', 1, 1)
        out[#out + 1] = mode .. ' ' .. token
    end
elseif kind == 'zset' then
    -- the count is the member "#permits", scored -K (semaphore_acquire.lua); it is not a holder
    out[5] = -(tonumber(redis.call('ZSCORE', KEYS[1], '#permits')) or 0)
    for _, token in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. now, '+inf')) do
        out[#out + 1] = token
    end
end
return out
