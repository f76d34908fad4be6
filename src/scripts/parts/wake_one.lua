-- SPDX-License-Identifier: BSL-1.0
-- wake_one.lua, a part of the release scripts: how a release tells the waiters on a channel.
-- The sorted set at the channel's own name (a key and a channel may share a name) lists the
-- clients that wait on it (listen.lua): member "<client id> <until>", until when the entry
-- counts in this server's milliseconds; score the id's first 13 hex digits, so every node
-- orders the same clients the same way. The release names the live client at a rank its token
-- chooses (the same one on every node that lists the same clients) and publishes
-- "<token> <id>" on that client's own channel, "<channel>:<id>", which only that client
-- subscribes to: one message per release, however many clients wait. With no client listed (an
-- older client, or one that polls) it publishes the token on the channel itself, where every
-- client wakes one of its waiters. An entry whose time is up goes when a release meets it.
local function listed_score(id)
    return tonumber(string.sub(id, 1, 13), 16)
end

local function publish_release(channel, token)
    local count = redis.call('ZCARD', channel)
    if count > 0 then
        local time = redis.call('TIME')
        local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
        local hash = tonumber(string.sub(redis.sha1hex(token), 1, 8), 16)
        while count > 0 do
            local rank = hash % count
            local entry = redis.call('ZRANGE', channel, rank, rank)[1]
            local space = string.find(entry, ' ', 1, true)
            if space and tonumber(string.sub(entry, space + 1)) > now then
                local id = string.sub(entry, 1, space - 1)
                redis.call('SPUBLISH', channel .. ':' .. id, token .. ' ' .. id)
                return
            end
            redis.call('ZREM', channel, entry)
            count = count - 1
        end
    end
    redis.call('SPUBLISH', channel, token)
end
