-- Remove terminal calls that ended before a horizon, fenced (see fence.lua and
-- buckets.lua, which precede this body). The caller read the candidates; each is removed only if it
-- is still terminal with the same end and not open.
-- KEYS[1] lease, KEYS[2] fence, KEYS[3] open, KEYS[4] terminal (sorted set),
-- KEYS[5] tb (terminal buckets by earliest end), KEYS[6..] the hashes the
-- arguments name by index.
-- ARGV[1] holder, ARGV[2] token, ARGV[3] candidates, ARGV[4] prune kinds,
-- ARGV[5] buckets to score again, ARGV[6] bucket set members to check; then
--   per candidate  id, ended (the terminal sorted set's ms score, or the
--                  bucket's value as read), terminal bucket index (0: in KEYS[4]), field,
--                  bucket, then per prune kind: single hash index, snapshot
--                  bucket index (0: none), field in it, bucket set index,
--                  bucket (an emptied bucket leaves its set)
--   per bucket     terminal bucket index, bucket
--   per member     snapshot bucket index, bucket set index, bucket (removed
--                  from the set when the bucket is empty)
-- Reply: {1, pruned} applied; {0, reason, holder, token} refused.
local refused = fence_check()
if refused then
  return refused
end

local nc, nk, nb, nm = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local i, n = 7, 0
for _ = 1, nc do
  local id, ended, tk, field = ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 2]), ARGV[i + 3]
  local still
  if tk > 0 then
    still = redis.call('HGET', KEYS[tk], field) == ended
  else
    local score = redis.call('ZSCORE', KEYS[4], id)
    still = score and tonumber(score) == tonumber(ended)
  end
  i = i + 5
  -- Commit keeps open and terminal disjoint; should an id be in both, the open
  -- call wins and keeps its snapshots.
  if still and not redis.call('ZSCORE', KEYS[3], id) then
    if tk > 0 then
      redis.call('HDEL', KEYS[tk], field)
    else
      redis.call('ZREM', KEYS[4], id)
    end
    for k = 0, nk - 1 do
      local j = i + 5 * k
      redis.call('HDEL', KEYS[tonumber(ARGV[j])], id)
      local bk, f = tonumber(ARGV[j + 1]), ARGV[j + 2]
      if bk > 0 then
        redis.call('HDEL', KEYS[bk], f, f .. '.1', f .. '.2', f .. '.3') -- keys.go's maxChunks
        bucket_emptied(bk, tonumber(ARGV[j + 3]), ARGV[j + 4])
      end
    end
    n = n + 1
  end
  i = i + 5 * nk
end
-- Score each bucket read again by its earliest end, or drop it once empty.
for _ = 1, nb do
  local ends = redis.call('HVALS', KEYS[tonumber(ARGV[i])])
  local first
  for _, e in ipairs(ends) do
    local v = tonumber(e)
    if v < 100000000000 then
      v = v * 1000 -- seconds (calls.go's terminalEnd), not an earlier release's ms
    end
    if not first or v < first then
      first = v
    end
  end
  if first then
    redis.call('ZADD', KEYS[5], first, ARGV[i + 1])
  else
    redis.call('ZREM', KEYS[5], ARGV[i + 1])
  end
  i = i + 2
end
for _ = 1, nm do
  bucket_emptied(tonumber(ARGV[i]), tonumber(ARGV[i + 1]), ARGV[i + 2])
  i = i + 3
end
return {1, n}
