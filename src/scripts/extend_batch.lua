-- SPDX-License-Identifier: BSL-1.0
-- extend_batch.lua: extend.lua for many leases in one call (the watchdog's renewals of one node);
-- never shortens a key's ttl (GT, as extend.lua).
-- KEYS[i]      lock key of lease i   "{<prefix><resource>}:lock"
-- ARGV[2i-1]   its owner token
-- ARGV[2i]     its new ttl in milliseconds
-- returns      an array with one integer per lease, in KEYS order:
--                1  extended
--                0  the key is missing or holds another token: that lease is no longer ours
-- Needs every key on this server: our nodes are independent masters, not a cluster.
-- pcall: a reentrant lock's hash at the key answers WRONGTYPE, which means "not ours".
local result = {}
for i = 1, #KEYS do
    if redis.pcall('GET', KEYS[i]) == ARGV[2 * i - 1] then
        redis.call('PEXPIRE', KEYS[i], ARGV[2 * i], 'GT')
        result[i] = 1
    else
        result[i] = 0
    end
end
return result
