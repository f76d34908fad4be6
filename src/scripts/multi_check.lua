-- SPDX-License-Identifier: BSL-1.0
-- multi_check.lua: does this acquisition still hold every one of its resources here, and for
-- how long? Reads only.
-- KEYS[1..n]  the resources' lock keys "{<prefix><resource>}:lock"
-- ARGV[1]     the acquisition's token
-- returns  ms the shortest of the holds has left here (>= 1; -1: none expires), or 0: some
--          resource is not held here
-- pcall: another kind's key (a hash, a sorted set) answers WRONGTYPE, which means "not ours".
local shortest = -1
for i = 1, #KEYS do
    if redis.pcall('GET', KEYS[i]) ~= ARGV[1] then
        return 0
    end
    local pttl = redis.call('PTTL', KEYS[i])
    if pttl == 0 or pttl == -2 then
        return 0
    end
    if pttl > 0 and (shortest == -1 or pttl < shortest) then
        shortest = pttl
    end
end
return shortest
