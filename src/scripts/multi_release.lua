-- SPDX-License-Identifier: BSL-1.0
-- multi_release.lua: free the locks of several resources where they hold our token, and tell
-- each resource's waiters.
-- KEYS[1..n]     the resources' lock keys "{<prefix><resource>}:lock"
-- KEYS[n+1..2n]  their released channels "{<prefix><resource>}:released", in the same order;
--                each also the sorted set of the clients waiting on it (parts/wake_one.lua)
-- ARGV[1]        owner token
-- ARGV[2]        optional: "quiet" deletes without publishing (a failed acquire cleaning up)
-- returns  1  every key held our token, and all were deleted
--          0  some key was missing or held another token (those that held ours were deleted)
-- include: wake_one.lua
-- pcall: another kind's key (a hash, a sorted set) answers WRONGTYPE, which means "not ours".
local n = #KEYS / 2
local all = 1
for i = 1, n do
    if redis.pcall('GET', KEYS[i]) == ARGV[1] then
        redis.call('DEL', KEYS[i])
        if ARGV[2] ~= 'quiet' then
            publish_release(KEYS[n + i], ARGV[1])
        end
    else
        all = 0
    end
end
return all
