-- SPDX-License-Identifier: BSL-1.0
-- fair.lua: a fair (FIFO) lock. The lock itself is the plain lock key (a token, with a ttl),
-- so extend.lua and the watchdog work on it unchanged. Beside it, waiters queue by ticket:
-- only the head of the queue, or anybody while the queue is empty, may take a free lock.
-- A waiter keeps its place by calling 'acquire' again before its deadline; the deadlines are
-- in the server's clock (TIME), and any call first evicts the waiters whose deadline passed.
-- A waiter's place in the queue is its acquisition's token; the value it writes to the lock is
-- its round's, "<place>.<n>" for its n-th round, so that the cleanup of a failed round,
-- arriving late, can never delete what a later round of the same acquisition took.
-- A lock handed over by a release (see hand_over) holds "<place>:<place>.<n>", the head's place
-- and the round that registered the hand-off: a value no round writes itself. Any later round
-- of that acquisition (n' > n) takes a value of one of its earlier rounds as its own, written or
-- handed over, and the end of the acquisition ('release') frees any: a round whose request or
-- cleanup was lost or late never locks its acquisition out, nor leaves a value it cannot free.
-- Neither an earlier round, however late its request arrives, nor any round's cleanup
-- ('withdraw', 'requeue') can take or free a later round's value or a hand-off.
-- KEYS[1]  lock key       "{<prefix><resource>}:lock"
-- KEYS[2]  queue          zset, member: a waiter's place token, score: its ticket
-- KEYS[3]  deadlines      zset, member: place token, score: server time (ms) its place is kept until
-- KEYS[4]  ticket counter
-- KEYS[5]  hand-offs: hash, member: place token, value: "<round token> <ttl ms> <deadline ms>"
--          of the last refused round that queued the waiter, and the deadline it gave the place
--          (not for a fenced lock)
-- KEYS[6]  optional: the fence counter "{<prefix><resource>}:fence" (a fenced lock)
-- ARGV[1]  'acquire'  take the lock, else keep (or take) a place in the queue
--          'release'  delete the lock if it holds ARGV[3] or a hand-off to our place, leave
--                     the queue: the end of an acquisition, or of its lease
--          'withdraw' delete the lock if it holds ARGV[3], leave the queue (a failed round
--                     that had not queued us)
--          'requeue'  delete the lock if it holds ARGV[3] and take our place back (a failed
--                     Redlock round)
--          'dequeue'  leave the queue only (granted elsewhere)
--          All but 'dequeue' then hand the lock over if it is free and the head is not us: a
--          lock a failed round held for a moment may have been refused to the head meanwhile.
--          A head with a hand-off gets the lock from this call (value: "<place>:<round>"; for
--          its ttl, but not past its place's deadline) and hears "granted <round token>": it
--          holds without a round trip of its own. Any other head is woken to try.
-- ARGV[2]  place token: the waiter's member in the queue; it hears its turn on ARGV[4] .. ARGV[2]
-- ARGV[3]  lock value: this round's, "<place>.<n>" (the lease's, for 'release' at its end)
-- ARGV[4]  wake channel prefix
-- ARGV[5]  ticket: a number, or 'none' (acquire: refused, take a number from this node's
--          counter and return it without queueing: the caller takes the largest of a quorum),
--          or 'local' (acquire: this node's number is final: queue with it; a single node)
-- ARGV[6]  how long (ms) a place is kept without a refresh
-- ARGV[7]  acquire: ttl of the lock in ms
-- ARGV[8]  acquire: 'wait' to queue when refused, 'once' never to queue
-- returns  acquire: {granted (1 or 0), holder's PTTL (0: free), ticket (0: none), rank (-1: not queued)}
--          fenced, a fifth: the grant's fence (see acquire_fenced.lua), 0 if refused
--          others:  1 if the lock was ours and was deleted, else 0
local lock, queue, deadlines, counter, handoffs = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local op, token, value = ARGV[1], ARGV[2], ARGV[3]
local fence_counter = KEYS[6]

local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)

local evicted = redis.call('ZRANGEBYSCORE', deadlines, '-inf', now)
for _, gone in ipairs(evicted) do
    redis.call('ZREM', queue, gone)
    redis.call('ZREM', deadlines, gone)
    redis.call('HDEL', handoffs, gone)
end
local changed = #evicted > 0  -- the queue changed: tidy() before returning

-- The queue, its deadlines and its counter live as long as the latest deadline, and go with
-- the last waiter (the counter only has to order waiters that are queued at the same time).
local function tidy()
    local last = redis.call('ZRANGE', deadlines, -1, -1, 'WITHSCORES')
    if #last == 0 then
        redis.call('DEL', queue, deadlines, counter, handoffs)
        return
    end
    local at = tonumber(last[2]) + 1
    redis.call('PEXPIREAT', queue, at)
    redis.call('PEXPIREAT', deadlines, at)
    redis.call('PEXPIREAT', counter, at)
    redis.call('PEXPIREAT', handoffs, at)
end

-- After removals alone, one call instead of tidy()'s five: every call that adds or refreshes a
-- place runs tidy(), so the keys already live until the latest deadline they held, and a
-- removal never needs them to live longer. They may outlive the remaining waiters' deadlines
-- by as much as a removed one's, and go with the last waiter as before.
local function tidy_after_removals()
    if redis.call('ZCARD', deadlines) == 0 then
        redis.call('DEL', queue, deadlines, counter, handoffs)
    end
end

local function leave_queue()
    if redis.call('ZREM', queue, token) == 1 then
        redis.call('ZREM', deadlines, token)
        redis.call('HDEL', handoffs, token)
        changed = true
    end
end

local function wake_head(payload, lock_free)
    if not lock_free then
        return
    end
    local head = redis.call('ZRANGE', queue, 0, 0)[1]
    if head and head ~= token then
        redis.call('SPUBLISH', ARGV[4] .. head, payload)
    end
end

-- The lock is free and the head is not the caller: the head's hand-off, if it has one, takes
-- the lock now. Its expiry never passes the head's deadline, so a head that died queued holds
-- the queue up no longer than its place would have; the head counts its validity from the
-- start of the round that asked for it, which reached us before its place's deadline was set.
local function hand_over(payload)
    local head = redis.call('ZRANGE', queue, 0, 0)[1]
    if not head or head == token then
        return false
    end
    -- "<round> <ttl> <deadline>": the deadline the head's place had when the hand-off was
    -- registered. A later refresh only moves it later, so the lock never outlives the place.
    local handoff = redis.call('HGET', handoffs, head)
    local round, ttl, deadline
    if handoff then
        round, ttl, deadline = string.match(handoff, '^(%S+) (%d+) (%d+)$')
        if not round then
            redis.call('HDEL', handoffs, head)  -- not ours
        end
    end
    local px = round and math.min(tonumber(ttl), tonumber(deadline) - now) or 0
    if px < 1 then
        -- No hand-off to take (none, not ours, or past the place's deadline): the head is
        -- woken to try.
        redis.call('SPUBLISH', ARGV[4] .. head, payload)
        return false
    end
    redis.call('SET', lock, head .. ':' .. round, 'PX', px)
    redis.call('ZREM', queue, head)
    redis.call('ZREM', deadlines, head)
    redis.call('HDEL', handoffs, head)
    changed = true
    redis.call('SPUBLISH', ARGV[4] .. head, 'granted ' .. round)
    return true
end

-- A refusal's answer: a fenced lock's has a fifth element, 0.
local function refused(pttl, ticket, rank)
    if fence_counter then
        return {0, pttl, ticket, rank, 0}
    end
    return {0, pttl, ticket, rank}
end

local function current_ticket()
    return tonumber(redis.call('GET', counter) or '0')
end

-- Tickets written back: every node's counter stays above every ticket it has queued.
local function keep_place(ticket)
    if current_ticket() < ticket then
        redis.call('SET', counter, ticket)
    end
    redis.call('ZADD', queue, 'NX', ticket, token)
    redis.call('ZADD', deadlines, now + tonumber(ARGV[6]), token)
end

-- The round n of a value of this acquisition, written by it ("<place>.<n>") or handed over to
-- the place it queued ("<place>:<place>.<n>"); nil for any other value. Places are tokens
-- (hex): one with a separator in it could name another place's values, and has no rounds.
local function our_round(v)
    if type(v) ~= 'string' or string.find(token, '[:.]') then
        return nil
    end
    local handed = token .. ':' .. token .. '.'
    local written = token .. '.'
    local rest
    if string.sub(v, 1, #handed) == handed then
        rest = string.sub(v, #handed + 1)
    elseif string.sub(v, 1, #written) == written then
        rest = string.sub(v, #written + 1)
    end
    if rest and string.match(rest, '^%d+$') then
        return tonumber(rest)
    end
    return nil
end

-- pcall: a reentrant lock's hash at the key answers WRONGTYPE: held, and not by us.
local holder = redis.pcall('GET', lock)
local holder_round = our_round(holder)
local ours = holder == value or (op == 'release' and holder_round ~= nil)
-- A value of an earlier round of ours (whose cleanup has not arrived, or was lost), or a
-- hand-off an earlier round registered and we have not heard of. Never a later round's: an
-- earlier round's late request would take over a lock that a lease holds.
local this_round = op == 'acquire' and our_round(value)
local earlier = this_round and holder_round ~= nil and holder_round < this_round

if op ~= 'acquire' then
    if op == 'requeue' then
        keep_place(tonumber(ARGV[5]))
    else
        leave_queue()
    end
    local handed = false
    if op ~= 'dequeue' and (ours or holder == false) then
        -- The payload names this event: the lock value is a round's, so one acquisition's
        -- requeue and its later release differ (a listener drops a payload it saw within a
        -- second, as the same event heard from another node).
        handed = hand_over(value)
    end
    -- A hand-over overwrote our value already.
    if ours and op ~= 'dequeue' and not handed then
        redis.call('DEL', lock)
    end
    if op == 'requeue' then
        tidy()
    elseif changed then
        tidy_after_removals()
    end
    return ours and 1 or 0
end

local head = redis.call('ZRANGE', queue, 0, 0)[1]
if ours or earlier or (holder == false and (head == nil or head == token)) then
    redis.call('SET', lock, value, 'PX', ARGV[7])
    -- A lock we already held was numbered by the grant that took it: the last one.
    local fence = 0
    if fence_counter and (ours or earlier) then
        fence = tonumber(redis.call('GET', fence_counter) or '0')
    elseif fence_counter then
        fence = redis.call('INCR', fence_counter)
    end
    leave_queue()
    if changed then
        tidy_after_removals()
    end
    -- Only a caller without a ticket needs the counter (the largest of a quorum numbers it).
    local ticket = 0
    if ARGV[5] == 'none' then
        ticket = current_ticket()
    end
    if fence_counter then
        return {1, 0, ticket, 0, fence}
    end
    return {1, 0, ticket, 0}
end

local pttl = 0
if holder ~= false then
    pttl = math.max(redis.call('PTTL', lock), 0)
end
-- An eviction may have made another waiter the head of a free lock: its turn.
if #evicted > 0 then
    wake_head(evicted[1], holder == false)
end
if ARGV[8] ~= 'wait' then
    if changed then
        tidy_after_removals()
    end
    return refused(pttl, 0, -1)
end
local ticket
if ARGV[5] == 'none' then
    ticket = redis.call('INCR', counter)
    -- Only a counter INCR created has no expiry yet: every other call leaves it with one.
    if ticket == 1 then
        tidy()
    elseif changed then
        tidy_after_removals()
    end
    return refused(pttl, ticket, -1)
elseif ARGV[5] == 'local' then
    ticket = tonumber(redis.call('ZSCORE', queue, token)) or redis.call('INCR', counter)
else
    ticket = tonumber(ARGV[5])
end
keep_place(ticket)
-- A fenced lock numbers every grant in the calls that take it, which a release's call cannot.
if not fence_counter then
    redis.call('HSET', handoffs, token, value .. ' ' .. ARGV[7] .. ' ' .. (now + tonumber(ARGV[6])))
end
tidy()
return refused(pttl, ticket, redis.call('ZRANK', queue, token))
