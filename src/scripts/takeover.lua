-- SPDX-License-Identifier: BSL-1.0
-- takeover.lua: an acquire round found the lock holding the token of its acquisition's previous
-- round (whose reply was lost and whose cleanup has not arrived): put this round's token in
-- its place, with the full ttl from now. A late cleanup of the previous round then finds
-- another token and deletes nothing.
-- KEYS[1]  lock key   "{<prefix><resource>}:lock"
-- ARGV[1]  the previous round's token
-- ARGV[2]  this round's token
-- ARGV[3]  ttl in milliseconds
-- returns  1  the lock holds this round's token now
--          0  it no longer held the previous round's: nothing changed
-- pcall: a reentrant lock's hash at the key answers WRONGTYPE, which means "not ours".
if redis.pcall('GET', KEYS[1]) == ARGV[1] then
    redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
    return 1
end
return 0
