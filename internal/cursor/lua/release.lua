-- Delete the lease if it still holds the caller's holder and token.
-- KEYS[1] lease
-- ARGV[1] holder, ARGV[2] token
-- Reply: 1 deleted, 0 not ours (or already gone).
local cur = redis.call('HMGET', KEYS[1], 'holder', 'token')
if cur[1] == ARGV[1] and cur[2] == ARGV[2] then
  return redis.call('DEL', KEYS[1])
end
return 0
