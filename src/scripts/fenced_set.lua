-- SPDX-License-Identifier: BSL-1.0
-- fenced_set.lua: the protected resource's side of fencing. Writes a value only if the writer's
-- fence is not lower than the highest fence seen for the resource, so a holder that paused past
-- its lease (and was followed by a holder with a higher fence) cannot write late.
-- KEYS[1]  the key to write
-- KEYS[2]  the highest fence seen for it
-- ARGV[1]  the writer's fence (lease::fence())
-- ARGV[2]  the value
-- returns  1  written (and the fence recorded)
--          0  refused: a higher fence was seen
local seen = tonumber(redis.call('GET', KEYS[2]) or '0')
local fence = tonumber(ARGV[1])
if fence < seen then
    return 0
end
if fence > seen then
    redis.call('SET', KEYS[2], ARGV[1])
end
redis.call('SET', KEYS[1], ARGV[2])
return 1
