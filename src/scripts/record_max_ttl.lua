-- SPDX-License-Identifier: BSL-1.0
-- record_max_ttl.lua: every client records on every node the largest ttl it may grant
-- (client_config::max_ttl), so that the restart quarantine of each client waits for the largest
-- lease any client of these nodes may hold, not only for its own. Run in each connection's
-- setup; the key has no expiry (one small string per node and prefix). A node that lost it in
-- a restart still has its peers' copies: a client takes the largest it reads from any node.
-- KEYS[1]  "{<prefix>}:max_ttl"
-- ARGV[1]  this client's max_ttl in ms
-- returns  the largest recorded, this one included (ms)
local recorded = tonumber(redis.call('GET', KEYS[1]) or '0') or 0
local ours = tonumber(ARGV[1])
if ours > recorded then
    redis.call('SET', KEYS[1], ARGV[1])
    return ours
end
return recorded
