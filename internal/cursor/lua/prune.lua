-- Remove terminal calls that ended before a horizon, fenced (see fence.lua, which
-- precedes this body).
-- KEYS[1] lease, KEYS[2] fence, KEYS[3] open, KEYS[4] terminal,
-- KEYS[5..] snapshot hashes keyed by call id.
-- ARGV[1] holder, ARGV[2] token, ARGV[3] horizon (unix ms, exclusive), ARGV[4] max.
-- Reply: {1, pruned} applied; {0, reason, holder, token} refused.
local refused = fence_check()
if refused then
  return refused
end

local ids = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', '(' .. ARGV[3], 'LIMIT', 0, tonumber(ARGV[4]))
local n = 0
for _, id in ipairs(ids) do
  redis.call('ZREM', KEYS[4], id)
  -- Commit keeps the two sets disjoint; should an id be in both, the open call
  -- wins and keeps its snapshots.
  if not redis.call('ZSCORE', KEYS[3], id) then
    for k = 5, #KEYS do
      redis.call('HDEL', KEYS[k], id)
    end
    n = n + 1
  end
end
return {1, n}
