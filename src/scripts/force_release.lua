-- SPDX-License-Identifier: BSL-1.0
-- force_release.lua: an operator's release of whatever holds a resource on this node
-- (client::async_force_release): any kind of lock, any holder. The fence counter stays (fences
-- must go on increasing) and so does a fair lock's queue (its waiters keep their places), and
-- a read-write lock's waiting writers' marks.
-- KEYS[1]  lock key          "{<prefix><resource>}:lock"
-- KEYS[2]  released channel  "{<prefix><resource>}:released"
-- KEYS[3]  read-write modes  "{<prefix><resource>}:rw"
-- returns  1  something held the resource here and was deleted (and waiters were told)
--          0  nothing held it here
redis.call('DEL', KEYS[3])
if redis.call('DEL', KEYS[1]) == 0 then
    return 0
end
-- Every waiter of this client: readers may all get in.
redis.call('SPUBLISH', KEYS[2], 'shared forced')
return 1
