-- Acknowledge the outbox up to an entry (see streamid.lua, which precedes this
-- body): move at most ARGV[4] of its oldest entries up to and including ARGV[1]
-- into the stream of acknowledged entries, keep those for the retention, and
-- forget the withdrawals of the entries moved.
-- KEYS[1] outbox, KEYS[2] acked, KEYS[3] acked:marks (sorted set: the newest
-- entry of each trim, scored by when it was acknowledged), KEYS[4] withdrawn.
-- ARGV[1] up to (inclusive), ARGV[2] retention in ms (0: keep none), ARGV[3] at
-- most this many acknowledged entries kept, ARGV[4] at most this many moved.
-- Reply: how many entries left the outbox (ARGV[4]: call again, more may follow).
local entries = redis.call('XRANGE', KEYS[1], '-', ARGV[1], 'COUNT', ARGV[4])
if #entries == 0 then
  return 0
end
local last = entries[#entries][1]
local keep_ms, cap = tonumber(ARGV[2]), tonumber(ARGV[3])
if keep_ms > 0 and cap > 0 then
  -- Same ids as in the outbox: the relay finds them by the Callbus-Outbox-Id the
  -- stream holds. An id at or before the newest kept (Redis restored from an
  -- older copy reused it) is not kept twice.
  local newest = outbox_last_id(KEYS[2])
  for _, e in ipairs(entries) do
    if stream_id_less(newest, e[1]) then
      redis.call('XADD', KEYS[2], e[1], unpack(e[2]))
    end
  end
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
    redis.call('XTRIM', KEYS[2], 'MINID', stream_id_next(upto))
    redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', cutoff)
  end
  redis.call('XTRIM', KEYS[2], 'MAXLEN', cap)
end
redis.call('XTRIM', KEYS[1], 'MINID', stream_id_next(last))
if redis.call('EXISTS', KEYS[4]) == 1 then
  for _, id in ipairs(redis.call('HKEYS', KEYS[4])) do
    if not stream_id_less(last, id) then
      redis.call('HDEL', KEYS[4], id)
    end
  end
end
return #entries
