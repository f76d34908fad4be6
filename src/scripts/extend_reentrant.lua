-- SPDX-License-Identifier: BSL-1.0
-- extend_reentrant.lua: keep a reentrant lock alive for one of its acquisitions (see
-- acquire_reentrant.lua); never recreates a missing key, never shortens the ttl.
-- KEYS[1]  lock key   "{<prefix><resource>}:lock"
-- ARGV[1]  owner id
-- ARGV[2]  token of the acquisition
-- ARGV[3]  new ttl in milliseconds
-- returns  1  the lock holds that acquisition and lives at least ttl from now
--          0  it does not: the lease is no longer ours
if redis.call('TYPE', KEYS[1]).ok ~= 'hash' or redis.call('HGET', KEYS[1], 'o') ~= ARGV[1] or
    redis.call('HEXISTS', KEYS[1], 'a:' .. ARGV[2]) == 0 then
    return 0
end
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[3]) then
    redis.call('PEXPIRE', KEYS[1], ARGV[3])
end
return 1
