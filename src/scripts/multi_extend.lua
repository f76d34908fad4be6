-- SPDX-License-Identifier: BSL-1.0
-- multi_extend.lua: give the locks of several resources a new ttl where they hold our token;
-- never recreates a missing key, never shortens one (GT, as extend.lua).
-- KEYS[1..n]  the resources' lock keys "{<prefix><resource>}:lock"
-- ARGV[1]     owner token
-- ARGV[2]     new ttl in milliseconds
-- returns  1  every key held our token and was extended
--          0  some key was missing or held another token: the lease no longer holds here
--             (nothing was extended, so what is left expires with its ttl)
-- pcall: another kind's key (a hash, a sorted set) answers WRONGTYPE, which means "not ours".
for i = 1, #KEYS do
    if redis.pcall('GET', KEYS[i]) ~= ARGV[1] then
        return 0
    end
end
for i = 1, #KEYS do
    redis.call('PEXPIRE', KEYS[i], ARGV[2], 'GT')
end
return 1
