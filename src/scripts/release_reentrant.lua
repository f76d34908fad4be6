-- SPDX-License-Identifier: BSL-1.0
-- release_reentrant.lua: end one acquisition of a reentrant lock (see acquire_reentrant.lua);
-- the last one deletes the lock and tells waiters.
-- KEYS[1]  lock key          "{<prefix><resource>}:lock"
-- KEYS[2]  released channel  "{<prefix><resource>}:released", also the sorted set of the
--                             clients waiting on it (parts/wake_one.lua)
-- ARGV[1]  owner id
-- ARGV[2]  token of the acquisition
-- ARGV[3]  optional: "quiet" does not publish (see release.lua)
-- returns  1  that acquisition ended (and, if it was the last, the lock was deleted and published)
--          0  the lock does not hold that acquisition: nothing changed
-- include: wake_one.lua
if redis.call('TYPE', KEYS[1]).ok ~= 'hash' or redis.call('HGET', KEYS[1], 'o') ~= ARGV[1] then
    return 0
end
if redis.call('HDEL', KEYS[1], 'a:' .. ARGV[2]) == 0 then
    return 0
end
-- Besides the acquisitions, the hash has the owner and, if fenced, the fence.
if redis.call('HLEN', KEYS[1]) <= 1 + redis.call('HEXISTS', KEYS[1], 'f') then
    redis.call('DEL', KEYS[1])
    if ARGV[3] ~= 'quiet' then
        -- The acquisition's token, not the owner: listeners drop a payload they saw within a
        -- second, and one owner may release twice in that time.
        publish_release(KEYS[2], ARGV[2])
    end
end
return 1
