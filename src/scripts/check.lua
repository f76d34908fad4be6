-- SPDX-License-Identifier: BSL-1.0
-- check.lua: does this acquisition still hold the lock here, and for how long? Reads only.
-- One script for every kind of lock, told apart by the key's type: a plain or fair lock's
-- string holds the token, a reentrant lock's hash has a field "a:<token>", a semaphore's
-- sorted set scores the token by its expiry in server time.
-- KEYS[1]  lock key   "{<prefix><resource>}:lock"
-- ARGV[1]  the acquisition's token (a fair lock's: the value it wrote)
-- returns  ms the hold has left here (>= 1; -1: no expiry), or 0: not held here
local kind = redis.call('TYPE', KEYS[1]).ok
local held = false
if kind == 'string' then
    held = redis.call('GET', KEYS[1]) == ARGV[1]
elseif kind == 'hash' then
    held = redis.call('HEXISTS', KEYS[1], 'a:' .. ARGV[1]) == 1
elseif kind == 'zset' then
    local expiry = redis.call('ZSCORE', KEYS[1], ARGV[1])
    if not expiry then
        return 0
    end
    local time = redis.call('TIME')
    local left = tonumber(expiry) - (tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000))
    return math.max(left, 0)
end
if not held then
    return 0
end
local pttl = redis.call('PTTL', KEYS[1])
if pttl == 0 then
    return 0
end
return pttl
