-- failover_mark.lua: the failover quarantine, kept with the data, so that a client that first
-- meets a master after its promotion sees it as well as one that watched the switch. Run in each
-- master connection's setup. The mark is the replication ID under which this master took writes
-- (INFO replication's master_replid); a promotion gives a server a new one, so a mark of another
-- ID on a server that was a replica (master_replid2 set) means that it became a master since the
-- mark was written, and may lack grants that its old master made: the script then starts the
-- quarantine in a key that expires when it ends, for every client to read. A mark of another ID
-- on a server that was never a replica is a restart (the restart quarantine's to judge); no mark
-- on a server that was a replica: its mark never reached it, nor, then, its old master's grants.
-- No KEYS: a cluster master must write keys of slots it serves, so the script takes the first
-- of "{<prefix>failover:<n>}" that it may write (n from 0; on a single server, n = 0).
-- ARGV[1]  key prefix (client_config::key_prefix)
-- ARGV[2]  the quarantine's length in ms (max_ttl + drift of the client that starts it)
-- ARGV[3]  the client's drift factor: a longer max_ttl recorded here by any client
--          (record_max_ttl.lua, "{<prefix>}:max_ttl", where this server serves its slot) makes
--          the quarantine that max_ttl + drift long
-- returns  {left ms (0: none), the length it was started with (ms)}, or an error reply
local repl = redis.call('INFO', 'replication')
if repl:match('role:(%a+)') ~= 'master' then
    return redis.error_reply('ERR failover mark: the server is not a master')
end
local replid = repl:match('master_replid:(%x+)')
local replid2 = repl:match('master_replid2:(%x+)')
if not replid or not replid2 then
    return redis.error_reply('ERR failover mark: INFO replication has no master_replid')
end
local base
for n = 0, 999 do
    local candidate = '{' .. ARGV[1] .. 'failover:' .. n .. '}'
    local got = redis.pcall('GET', candidate .. ':mark')
    if type(got) ~= 'table' or not got.err then
        base = candidate
        break
    end
end
if not base then
    return redis.error_reply('ERR failover mark: no key of a slot this server serves may be written')
end
local mark, quarantine = base .. ':mark', base .. ':quarantine'
local length = tonumber(ARGV[2])
local recorded = redis.pcall('GET', '{' .. ARGV[1] .. '}:max_ttl')
if type(recorded) == 'string' and tonumber(recorded) then
    local ttl = tonumber(recorded)
    length = math.max(length, ttl + math.floor(ttl * tonumber(ARGV[3])) + 2)
end
if redis.call('GET', mark) ~= replid then
    -- A quarantine still running (another promotion's) is kept if it ends later.
    if replid2 ~= string.rep('0', #replid2) and redis.call('PTTL', quarantine) < length then
        redis.call('SET', quarantine, length, 'PX', length)
    end
    redis.call('SET', mark, replid)
end
local left = redis.call('PTTL', quarantine)
if left <= 0 then return {0, 0} end
return {left, tonumber(redis.call('GET', quarantine)) or 0}
