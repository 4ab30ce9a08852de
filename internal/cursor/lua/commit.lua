-- Apply one batch atomically, fenced (see fence.lua, buckets.lua and
-- streamid.lua, which precede this body).
-- KEYS[1] lease, KEYS[2] fence, KEYS[3] open, KEYS[4] terminal (sorted set of the
-- calls whose id is not bucketed, and of those written by earlier releases),
-- KEYS[5] cursor, KEYS[6] outbox, KEYS[7] kinds, KEYS[8] tb (terminal buckets by
-- earliest end), KEYS[9] outbox:meta, KEYS[10..] the snapshot hashes, bucket
-- sets and terminal buckets the items name by index.
-- ARGV[1] holder, ARGV[2] token, ARGV[3..9] counts: kinds, deletes, snapshots,
-- open, terminal, cursors, events; ARGV[10] the newest outbox id the caller
-- committed ("" for no check); then, in that order:
--   kind names
--   deletes    single hash index, id, bucket index (0: none), field, bucket set
--              index, bucket
--   snapshots  single hash index, id, bucket index (0: none), field, bucket set
--              index, bucket, data
--   open       created ms, id, terminal bucket index (0: none), field, bucket
--   terminal   ended ms, id, terminal bucket index (0: none), field, bucket
--   cursors    name, value
--   events     when there are any, all of them in one value (outbox_batch.go)
-- A snapshot of a bucketed kind lives either in its bucket, cut in chunks (the
-- field, then '<field>.1' up to '<field>.3': keys.go's maxChunks), or, too long
-- for that (or written by an earlier release), in the single hash of its kind:
-- writing it in one place removes it from the other. A bucket that a delete or
-- such a move empties leaves its bucket set (buckets.lua).
-- The events go to the outbox as one batch entry (fields n, events) under the
-- last of n stream ids reserved for them, one per event (outbox_batch.go).
-- outbox:meta keeps the outbox's last generated id (field last) with the token
-- of the term that wrote it (field token), so that a commit need not ask the
-- stream (XINFO STREAM copies its first and last entries): within one term only
-- its own commits append, and a new term asks the stream once. Its field more
-- counts the events of the outbox beyond one per entry (OutboxLen).
-- Reply: {1, prev, batch entry id or ''} applied, prev being the outbox's last
-- generated id before this batch's entries; {0, reason, holder, token} refused by
-- the fence; {0, 'rollback', outbox last id, ARGV[10]} refused because the
-- outbox's last generated id is older than what the caller committed: Redis went
-- back in time (restored, failed over, restarted without its last writes).
-- Either way nothing was written but the fence (raised to the caller's own token).
local refused = fence_check()
if refused then
  return refused
end
-- The outbox's last generated id: outbox:meta's when this term wrote it.
local meta = redis.call('HMGET', KEYS[9], 'last', 'token')
local prev = meta[1]
if not prev or meta[2] ~= ARGV[2] then
  prev = outbox_last_id(KEYS[6])
end
if ARGV[10] ~= '' and stream_id_less(prev, ARGV[10]) then
  if meta[2] == ARGV[2] then
    prev = outbox_last_id(KEYS[6]) -- the stream has the last word
  end
  if stream_id_less(prev, ARGV[10]) then
    return {0, 'rollback', prev, ARGV[10]}
  end
end

local nk, nd, ns = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local no, nt, nc, ne = tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8]), tonumber(ARGV[9])
local i = 11

for _ = 1, nk do
  redis.call('SADD', KEYS[7], ARGV[i])
  i = i + 1
end
local max_chunks, chunk_size = 4, 63 -- keys.go's maxChunks and chunkSize

-- drop_chunks removes every chunk of field from bucket key k, from chunk from on.
local function drop_chunks(k, field, from)
  local fields = {}
  for j = from, max_chunks - 1 do
    fields[#fields + 1] = j == 0 and field or (field .. '.' .. j)
  end
  if #fields > 0 then
    redis.call('HDEL', KEYS[k], unpack(fields))
  end
end

-- has reports whether KEYS[k] exists, as this script left it: the single
-- hashes and the terminal sorted set are empty but for states of earlier
-- releases and unusual ids, so their removals are skipped, one EXISTS a script
-- instead of a command per item. A key this script wrote to exists; one it
-- removed from may still count as existing (an HDEL or ZREM too many).
local exists = {}
local function has(k)
  local e = exists[k]
  if e == nil then
    e = redis.call('EXISTS', KEYS[k]) == 1
    exists[k] = e
  end
  return e
end

for _ = 1, nd do
  local single = tonumber(ARGV[i])
  if has(single) then
    redis.call('HDEL', KEYS[single], ARGV[i + 1])
  end
  local bk = tonumber(ARGV[i + 2])
  if bk > 0 then
    drop_chunks(bk, ARGV[i + 3], 0)
    bucket_emptied(bk, tonumber(ARGV[i + 4]), ARGV[i + 5])
  end
  i = i + 6
end
for _ = 1, ns do
  local single, id, bk, field = tonumber(ARGV[i]), ARGV[i + 1], tonumber(ARGV[i + 2]), ARGV[i + 3]
  local set, bucket, data = tonumber(ARGV[i + 4]), ARGV[i + 5], ARGV[i + 6]
  if bk > 0 and #data <= max_chunks * chunk_size then
    if has(single) then
      redis.call('HDEL', KEYS[single], id)
    end
    local kv, n = {field, string.sub(data, 1, chunk_size)}, 1
    while n * chunk_size < #data do
      kv[#kv + 1] = field .. '.' .. n
      kv[#kv + 1] = string.sub(data, n * chunk_size + 1, (n + 1) * chunk_size)
      n = n + 1
    end
    redis.call('HSET', KEYS[bk], unpack(kv))
    drop_chunks(bk, field, n)
    bucket_written(set, bucket)
  else
    redis.call('HSET', KEYS[single], id, data)
    exists[single] = true
    if bk > 0 then
      drop_chunks(bk, field, 0)
      bucket_emptied(bk, set, bucket)
    end
  end
  i = i + 7
end
for _ = 1, no do
  redis.call('ZADD', KEYS[3], ARGV[i], ARGV[i + 1])
  if has(4) then
    redis.call('ZREM', KEYS[4], ARGV[i + 1])
  end
  local tk = tonumber(ARGV[i + 2])
  if tk > 0 then
    redis.call('HDEL', KEYS[tk], ARGV[i + 3]) -- tb's score may now be early: prune mends it
  end
  i = i + 5
end
for _ = 1, nt do
  redis.call('ZREM', KEYS[3], ARGV[i + 1])
  local tk = tonumber(ARGV[i + 2])
  if tk > 0 then
    if has(4) then
      redis.call('ZREM', KEYS[4], ARGV[i + 1])
    end
    redis.call('HSET', KEYS[tk], ARGV[i + 3], ARGV[i])
    local first = redis.call('ZSCORE', KEYS[8], ARGV[i + 4])
    if not first or tonumber(ARGV[i]) < tonumber(first) then
      redis.call('ZADD', KEYS[8], ARGV[i], ARGV[i + 4])
    end
  else
    redis.call('ZADD', KEYS[4], ARGV[i], ARGV[i + 1])
    exists[4] = true
  end
  i = i + 5
end
for _ = 1, nc do
  redis.call('HSET', KEYS[5], ARGV[i], ARGV[i + 1])
  i = i + 2
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
local added = redis.pcall('XADD', KEYS[6], id, 'n', ne, 'events', ARGV[i])
if type(added) == 'table' and added.err then
  -- outbox:meta was behind the stream (something else appended this term):
  -- ask the stream, and reserve after its last id.
  prev = outbox_last_id(KEYS[6])
  id = reserve(prev)
  redis.call('XADD', KEYS[6], id, 'n', ne, 'events', ARGV[i])
end
redis.call('HSET', KEYS[9], 'last', id, 'token', ARGV[2])
if ne > 1 then
  redis.call('HINCRBY', KEYS[9], 'more', ne - 1)
end
return {1, prev, id}
