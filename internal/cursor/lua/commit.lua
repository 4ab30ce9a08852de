-- Apply one batch atomically, fenced (see fence.lua and streamid.lua, which
-- precede this body).
-- KEYS[1] lease, KEYS[2] fence, KEYS[3] outbox, KEYS[4] outbox:meta, KEYS[5..]
-- the keys the commands below name by index.
-- ARGV[1] holder, ARGV[2] token, ARGV[3] the newest outbox id the caller
-- committed ("" for no check), ARGV[4] the number of events, ARGV[5] all of them
-- in one value (outbox_batch.go; "" for none); then the batch's writes as
-- commands grouped by key (commit_ops.go), each laid out as: guard, command
-- name, key index, n, n arguments. guard 0 runs the command; g > 0 runs it only
-- when KEYS[g] exists, g < 0 only when KEYS[-g] does not.
-- The events go to the outbox as one batch entry (fields n, events) under the
-- last of n stream ids reserved for them, one per event (outbox_batch.go).
-- outbox:meta keeps the outbox's last generated id (field last) with the token
-- of the term that wrote it (field token), so that a commit need not ask the
-- stream (XINFO STREAM copies its first and last entries): within one term only
-- its own commits append, and a new term asks the stream once. Its field more
-- counts the events of the outbox beyond one per entry (OutboxLen).
-- Reply: {1, prev, batch entry id or ''} applied, prev being the outbox's last
-- generated id before this batch's entries; {0, reason, holder, token} refused by
-- the fence; {0, 'rollback', outbox last id, ARGV[3]} refused because the
-- outbox's last generated id is older than what the caller committed: Redis went
-- back in time (restored, failed over, restarted without its last writes).
-- Either way nothing was written but the fence (raised to the caller's own token).
-- The commands a commit writes with: anything else is a caller's mistake,
-- refused before anything is written (a script's writes are not undone).
local writes = {HSET = true, HDEL = true, SADD = true, SREM = true, ZADD = true, ZREM = true}
local j = 6
while j <= #ARGV do
  if not writes[ARGV[j + 1]] or not tonumber(ARGV[j + 3]) then
    return redis.error_reply('commit: malformed command at argument ' .. j)
  end
  j = j + 4 + tonumber(ARGV[j + 3])
end
local refused = fence_check()
if refused then
  return refused
end
-- The outbox's last generated id: outbox:meta's when this term wrote it.
local meta = redis.call('HMGET', KEYS[4], 'last', 'token')
local prev = meta[1]
if not prev or meta[2] ~= ARGV[2] then
  prev = outbox_last_id(KEYS[3])
end
if ARGV[3] ~= '' and stream_id_less(prev, ARGV[3]) then
  if meta[2] == ARGV[2] then
    prev = outbox_last_id(KEYS[3]) -- the stream has the last word
  end
  if stream_id_less(prev, ARGV[3]) then
    return {0, 'rollback', prev, ARGV[3]}
  end
end

local ne, i, last = tonumber(ARGV[4]), 6, #ARGV
while i <= last do
  local guard, k, n = tonumber(ARGV[i]), tonumber(ARGV[i + 2]), tonumber(ARGV[i + 3])
  if guard == 0 or (redis.call('EXISTS', KEYS[math.abs(guard)]) == 1) == (guard > 0) then
    redis.call(ARGV[i + 1], KEYS[k], unpack(ARGV, i + 4, i + 3 + n))
  end
  i = i + 4 + n
end
if ne == 0 then
  return {1, prev, ''}
end
-- Reserve ne ids after prev: <ms>-<seq-ne+1> .. <ms>-<seq>, the entry taking the
-- last; ms is the Redis clock's, or prev's when the clock is behind it.
local function reserve(last)
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  local lm, ls = string.match(last, '^(%d+)-(%d+)$')
  lm, ls = tonumber(lm), tonumber(ls)
  if now > lm then
    return now .. '-' .. (ne - 1)
  end
  return string.format('%d-%d', lm, ls + ne)
end
local id = reserve(prev)
local added = redis.pcall('XADD', KEYS[3], id, 'n', ne, 'events', ARGV[5])
if type(added) == 'table' and added.err then
  -- outbox:meta was behind the stream (something else appended this term):
  -- ask the stream, and reserve after its last id.
  prev = outbox_last_id(KEYS[3])
  id = reserve(prev)
  redis.call('XADD', KEYS[3], id, 'n', ne, 'events', ARGV[5])
end
redis.call('HSET', KEYS[4], 'last', id, 'token', ARGV[2])
if ne > 1 then
  redis.call('HINCRBY', KEYS[4], 'more', ne - 1)
end
return {1, prev, id}
