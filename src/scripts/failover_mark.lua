-- SPDX-License-Identifier: BSL-1.0
-- failover_mark.lua: the failover quarantine, kept with the data, so that a client that first
-- meets a master after its promotion sees it as well as one that watched the switch. Run in each
-- master connection's setup. A promotion gives a server a new replication ID (INFO
-- replication's master_replid) and keeps the old one as master_replid2; a server that was never
-- a replica has none there. On a promoted master the mark is the ID under which a client last
-- found it a master: a mark of another ID, or none, means that it became a master since, and
-- may lack grants that its old master made, so the script starts the quarantine in a key that
-- expires when it ends, for every client to read, and marks the master with its ID. A master
-- that was never a replica is not marked (a restart is the restart quarantine's to judge).
-- REPLICAOF NO ONE sent to a server that is a master already keeps its replication ID: a
-- failover that picks a master restarted during the one before, before the sentinels made it
-- a replica, leaves no trace there. The calls of REPLICAOF and SLAVEOF the server answered
-- (INFO commandstats) do: `:replicaof` keeps "<run_id>:<calls>" as a client last found the
-- master, and a master told REPLICAOF since then, or whose calls no client recorded, is
-- quarantined as a promoted one.
-- The length of a quarantine is the longest max_ttl + drift that any client recorded on the
-- master (kept beside the mark, so a promoted replica has what its old master recorded), or
-- the caller's if longer.
-- No KEYS: a cluster master must write keys of slots it serves, so the script takes the first
-- of "{<prefix>failover:<n>}" that it may write (n from 0; on a single server, n = 0).
-- ARGV[1]  key prefix (client_config::key_prefix)
-- ARGV[2]  this client's max_ttl + drift in ms
-- returns  {left ms (0: none), the length it was started with (ms), master_replid}; the client
--          counts a later grant of this server only if INFO replication behind it names that
--          ID (a promotion gives a new one); {-1, 0, ''} from a replica (a connection made as a
--          failover goes on: whatever it grants later comes after its promotion, which the
--          client quarantines from now); or an error reply
local info = redis.call('INFO', 'server', 'replication', 'commandstats')
if info:match('role:(%a+)') ~= 'master' then
    return {-1, 0, ''}
end
local replid = info:match('master_replid:(%x+)')
local replid2 = info:match('master_replid2:(%x+)')
local run_id = info:match('run_id:(%x+)')
if not replid or not replid2 or not run_id then
    return redis.error_reply('ERR failover mark: INFO has no master_replid or run_id')
end
local told = tonumber(info:match('cmdstat_replicaof:calls=(%d+)') or '0') +
             tonumber(info:match('cmdstat_slaveof:calls=(%d+)') or '0')
local base
for n = 0, 999 do
    local candidate = '{' .. ARGV[1] .. 'failover:' .. n .. '}'
    local got = redis.pcall('GET', candidate .. ':length')
    if type(got) ~= 'table' or not got.err then
        base = candidate
        break
    end
end
if not base then
    return redis.error_reply('ERR failover mark: no key of a slot this server serves may be written')
end
local mark, quarantine, longest = base .. ':mark', base .. ':quarantine', base .. ':length'
local replicaof, stamp = base .. ':replicaof', run_id .. ':' .. told
local length = tonumber(ARGV[2])
local recorded = tonumber(redis.call('GET', longest) or '0') or 0
if length > recorded then
    redis.call('SET', longest, length)
else
    length = recorded
end
local new_id = replid2 ~= string.rep('0', #replid2) and redis.call('GET', mark) ~= replid
local new_told = told > 0 and redis.call('GET', replicaof) ~= stamp
if new_id or new_told then
    -- A quarantine still running (another promotion's) is kept if it ends later.
    if redis.call('PTTL', quarantine) < length then
        redis.call('SET', quarantine, length, 'PX', length)
    end
    if new_id then redis.call('SET', mark, replid) end
    if new_told then redis.call('SET', replicaof, stamp) end
end
local left = redis.call('PTTL', quarantine)
if left <= 0 then return {0, 0, replid} end
return {left, tonumber(redis.call('GET', quarantine)) or 0, replid}
