-- Take the lease if nobody holds it, or extend it if the caller already does.
-- KEYS[1] lease, KEYS[2] lease:seq, KEYS[3] fence
-- ARGV[1] holder, ARGV[2] ttl (ms)
-- Reply: {1, token, ttl_ms} taken or kept; {0, holder, token, ttl_ms} held by another.
local cur = redis.call('HMGET', KEYS[1], 'holder', 'token')
if cur[1] then
  if cur[1] == ARGV[1] then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
    return {1, tonumber(cur[2]), tonumber(ARGV[2])}
  end
  return {0, cur[1], tonumber(cur[2]), redis.call('PTTL', KEYS[1])}
end
-- The counter never expires, but a Redis that lost it may still have the fence:
-- never hand out a token at or below one that already wrote.
local fence = tonumber(redis.call('GET', KEYS[3]) or '0')
local seq = tonumber(redis.call('GET', KEYS[2]) or '0')
if seq < fence then
  redis.call('SET', KEYS[2], string.format('%d', fence))
end
local tok = redis.call('INCR', KEYS[2])
local now = redis.call('TIME')
local since = string.format('%d', tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000))
redis.call('HSET', KEYS[1], 'holder', ARGV[1], 'token', string.format('%d', tok), 'since', since)
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return {1, tok, tonumber(ARGV[2])}
