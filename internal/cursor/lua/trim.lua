-- Acknowledge the outbox up to an entry (see streamid.lua, which precedes this
-- body): move at most ARGV[4] of its oldest entries up to and including ARGV[1]
-- into the stream of acknowledged entries, keep those for the retention, and
-- forget the withdrawals of the entries moved. A batch entry (fields n, events:
-- outbox_batch.go) counts as its n events, any other entry as one.
-- KEYS[1] outbox, KEYS[2] acked, KEYS[3] acked:marks (sorted set: the newest
-- entry of each trim, scored by when it was acknowledged), KEYS[4] withdrawn,
-- KEYS[5] outbox:meta (field last: the outbox's last generated id, see
-- commit.lua; more: the outbox's events beyond one per entry; trimmed: the
-- newest id acknowledged, for the events of a batch entry that stays because
-- its last event is not; ackedbytes: the bytes of the entries in acked, their
-- fields' names and values; acked, the count of events that releases before the
-- bound in bytes kept there, is removed).
-- ARGV[1] up to (inclusive), ARGV[2] retention in ms (0: keep none), ARGV[3] at
-- most this many bytes of acknowledged entries kept, ARGV[4] at most this many
-- moved.
-- Reply: how many entries left the outbox (ARGV[4]: call again, more may follow).
local meta = redis.call('HMGET', KEYS[5], 'last', 'trimmed')
if meta[1] and not stream_id_less(meta[1], ARGV[1]) and not (meta[2] and not stream_id_less(meta[2], ARGV[1])) then
  redis.call('HSET', KEYS[5], 'trimmed', ARGV[1])
end
-- The withdrawals of the events acknowledged (of entries moved or not).
if redis.call('EXISTS', KEYS[4]) == 1 then
  for _, id in ipairs(redis.call('HKEYS', KEYS[4])) do
    if not stream_id_less(ARGV[1], id) then
      redis.call('HDEL', KEYS[4], id)
    end
  end
end
local entries = redis.call('XRANGE', KEYS[1], '-', ARGV[1], 'COUNT', ARGV[4])
if #entries == 0 then
  return 0
end
local last = entries[#entries][1]
local keep_ms, cap = tonumber(ARGV[2]), tonumber(ARGV[3])

-- events_of is how many events an entry's fields hold (a batch entry's n first).
local function events_of(fields)
  if fields[1] == 'n' then
    return tonumber(fields[2]) or 1
  end
  return 1
end

-- bytes_of is the bytes of an entry's fields, names and values: what the bound
-- on acked counts.
local function bytes_of(fields)
  local n = 0
  for _, v in ipairs(fields) do
    n = n + #v
  end
  return n
end

-- drop_acked removes acked's oldest entries, those up to and including id upto
-- (nil: no bound) or, with upto nil, until at most keep bytes are left; it
-- returns the bytes removed. It reads acked in pages that start small and
-- double: an entry read comes into Lua whole (Redis hashes every byte of it),
-- and a trim at the bound drops about as many entries as it moved, one or two.
local function drop_acked(upto, keep, count)
  local dropped, from, page = 0, '-', 1
  while true do
    local old = redis.call('XRANGE', KEYS[2], from, upto or '+', 'COUNT', page)
    if #old == 0 then
      return dropped
    end
    local through
    for _, e in ipairs(old) do
      if not upto and count - dropped <= keep then
        break
      end
      dropped = dropped + bytes_of(e[2])
      through = e[1]
    end
    if not through then
      return dropped
    end
    redis.call('XTRIM', KEYS[2], 'MINID', stream_id_next(through))
    if through ~= old[#old][1] or #old < page then
      return dropped
    end
    from, page = stream_id_next(through), math.min(page * 2, 64)
  end
end

local extra = 0
for _, e in ipairs(entries) do
  extra = extra + events_of(e[2]) - 1
end
if keep_ms > 0 and cap > 0 then
  -- Same ids as in the outbox: the relay finds them by the Callbus-Outbox-Id the
  -- stream holds. An id at or before the newest kept (Redis restored from an
  -- older copy reused it) is not kept twice: XADD refuses it.
  local added = 0
  for _, e in ipairs(entries) do
    local ok = redis.pcall('XADD', KEYS[2], e[1], unpack(e[2]))
    if not (type(ok) == 'table' and ok.err) then
      added = added + bytes_of(e[2])
    end
  end
  -- Entries a release before the bound in bytes kept are not counted: the
  -- retention's time drops them.
  local count = (tonumber(redis.call('HGET', KEYS[5], 'ackedbytes')) or 0) + added
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  redis.call('ZADD', KEYS[3], now, last)
  -- Retention counts from the acknowledgement, not the commit: a backlog
  -- published late is kept as long as one published at once.
  local cutoff = '(' .. (now - keep_ms)
  local old = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', cutoff)
  if #old > 0 then
    local upto = '0-0'
    for _, id in ipairs(old) do
      if stream_id_less(upto, id) then
        upto = id
      end
    end
    count = count - drop_acked(upto, 0, count)
    redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', cutoff)
  end
  if count > cap then
    count = count - drop_acked(nil, cap, count)
  end
  if count < 0 or redis.call('XLEN', KEYS[2]) == 0 then
    count = 0 -- entries of a release before the count, or a count gone astray
  end
  redis.call('HSET', KEYS[5], 'ackedbytes', count)
  redis.call('HDEL', KEYS[5], 'acked')
end
redis.call('XTRIM', KEYS[1], 'MINID', stream_id_next(last))
if redis.call('XLEN', KEYS[1]) == 0 then
  redis.call('HDEL', KEYS[5], 'more', 'trimmed')
elseif extra > 0 then
  redis.call('HINCRBY', KEYS[5], 'more', -extra)
end
return #entries
