-- Extend the lease if it still holds the caller's holder and token.
-- KEYS[1] lease
-- ARGV[1] holder, ARGV[2] token, ARGV[3] ttl (ms)
-- Reply: {1} extended; {0, holder, token, ttl_ms} lost (holder '' if none).
local cur = redis.call('HMGET', KEYS[1], 'holder', 'token')
if cur[1] == ARGV[1] and cur[2] == ARGV[2] then
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  return {1}
end
if not cur[1] then
  return {0, '', 0, 0}
end
return {0, cur[1], tonumber(cur[2]), redis.call('PTTL', KEYS[1])}
