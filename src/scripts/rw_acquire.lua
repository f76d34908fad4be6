-- SPDX-License-Identifier: BSL-1.0
-- rw_acquire.lua: a read or a write hold of a read-write lock (lock_options::mode).
-- The lock key is a sorted set of the holders' tokens, scored by when each hold expires in
-- server time (a dead holder's hold lapses on its own, as a semaphore's permit does); a hash
-- beside it says each holder's mode, fence and owner. Readers share; a writer holds alone. A
-- writer that is refused and waits leaves a mark (scored by when it lapses) that refuses new
-- readers until it holds, so a stream of readers cannot starve it. Holds of one owner (a
-- reentrant lock's) go together: an owner that holds in either mode may read, one that writes
-- may write again, one that only reads may not write (refused at once: two such owners would
-- wait for each other for ever).
-- KEYS[1]  holders          "{<prefix><resource>}:lock"
-- KEYS[2]  modes            "{<prefix><resource>}:rw"
-- KEYS[3]  waiting writers  "{<prefix><resource>}:rw:waiting"
-- KEYS[4]  fence counter    "{<prefix><resource>}:fence"
-- ARGV[1]  token
-- ARGV[2]  ttl in milliseconds
-- ARGV[3]  "r" (read) or "w" (write)
-- ARGV[4]  owner id, "" for none
-- ARGV[5]  a writer that waits: how long its mark lasts, in ms; "0": leave no mark
-- ARGV[6]  "1": number a write hold with the fence counter
-- ARGV[7]  optional: the token of this acquisition's previous round, whose hold and mark go
-- returns  {1, fence}  granted (fence 0 unless numbered), or already held by ARGV[1]
--          {0, pttl}   refused: ms until the first hold or mark in the way lapses (>= 1), or
--                      the key holds another kind of lock (its PTTL, -1 without expiry)
--          {-1, 0}     refused at once: the owner only reads, and asks to write
local kind = redis.call('TYPE', KEYS[1]).ok
if kind ~= 'zset' and kind ~= 'none' then
    return {0, redis.call('PTTL', KEYS[1])}
end
if kind == 'zset' and redis.call('EXISTS', KEYS[2]) == 0 then
    return {0, redis.call('PTTL', KEYS[1])} -- a semaphore's permits
end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local token, mode, owner = ARGV[1], ARGV[3], ARGV[4]
for _, gone in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now)) do
    redis.call('ZREM', KEYS[1], gone)
    redis.call('HDEL', KEYS[2], gone)
end
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
if ARGV[7] then
    redis.call('ZREM', KEYS[1], ARGV[7])
    redis.call('HDEL', KEYS[2], ARGV[7])
    redis.call('ZREM', KEYS[3], ARGV[7])
end

local function hold(fence)
    redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), token)
    local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')[2]
    redis.call('PEXPIREAT', KEYS[1], last)
    redis.call('PEXPIREAT', KEYS[2], last)
    return {1, fence}
end

local ours = redis.call('HGET', KEYS[2], token)
if ours and redis.call('ZSCORE', KEYS[1], token) then
    return hold(tonumber(string.match(ours, '^%a (%d+)')))
end

-- What holds it: our owner's holds, and when the first of the others' in our way lapses.
local mine_read, mine_write = false, false
local in_way = nil
local holders = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
for i = 1, #holders, 2 do
    local m, o = string.match(redis.call('HGET', KEYS[2], holders[i]) or '', '^(%a) %d+ (.*)$')
    if owner ~= '' and o == owner then
        if m == 'w' then
            mine_write = true
        else
            mine_read = true
        end
    elseif mode == 'w' or m ~= 'r' then
        local expiry = tonumber(holders[i + 1])
        if not in_way or expiry < in_way then
            in_way = expiry
        end
    end
end

if mode == 'w' then
    if mine_read and not mine_write then
        return {-1, 0}
    end
    if not in_way then
        redis.call('ZREM', KEYS[3], token)
        local fence = 0
        if ARGV[6] == '1' then
            fence = redis.call('INCR', KEYS[4])
        end
        redis.call('HSET', KEYS[2], token, 'w ' .. fence .. ' ' .. owner)
        return hold(fence)
    end
    if tonumber(ARGV[5]) > 0 then
        redis.call('ZADD', KEYS[3], now + tonumber(ARGV[5]), token)
        redis.call('PEXPIREAT', KEYS[3], redis.call('ZRANGE', KEYS[3], -1, -1, 'WITHSCORES')[2])
    end
    return {0, math.max(1, in_way - now)}
end

if not (mine_read or mine_write) then
    if not in_way then
        local mark = redis.call('ZRANGE', KEYS[3], 0, 0, 'WITHSCORES')[2]
        if mark then
            in_way = tonumber(mark)
        end
    end
    if in_way then
        return {0, math.max(1, in_way - now)}
    end
end
redis.call('HSET', KEYS[2], token, 'r 0 ' .. owner)
return hold(0)
