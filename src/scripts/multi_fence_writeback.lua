-- SPDX-License-Identifier: BSL-1.0
-- multi_fence_writeback.lua: fence_writeback.lua for several resources held by one token:
-- raise each resource's counter to the fence its grant settled on, while our acquisition still
-- holds every one of them here.
-- KEYS[1..n]     the resources' lock keys "{<prefix><resource>}:lock"
-- KEYS[n+1..2n]  their fence counters "{<prefix><resource>}:fence", same order
-- ARGV[1]        token
-- ARGV[2]        the fences, one per resource in KEYS' order, separated by spaces
-- returns  1  every lock holds our token and every counter is at least its fence
--          0  some lock no longer holds it: nothing changed
local n = #KEYS / 2
for i = 1, n do
    if redis.pcall('GET', KEYS[i]) ~= ARGV[1] then
        return 0
    end
end
local i = 0
for fence in string.gmatch(ARGV[2], '%d+') do
    i = i + 1
    if i > n then
        break
    end
    if tonumber(redis.call('GET', KEYS[n + i]) or '0') < tonumber(fence) then
        redis.call('SET', KEYS[n + i], fence)
    end
end
return 1
