-- Read, and on a heartbeat renew, the fleet's membership: one sorted set whose
-- members are replica names scored by their expiry in ms of Redis's own clock
-- (TIME), so the replicas' clocks never matter.
-- KEYS[1] the members set
-- ARGV[1] replica, ARGV[2] ttl (ms), ARGV[3] "beat" to renew, "read" to only read
-- Reply: the live members (expiry after now), in any order.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if ARGV[3] == 'beat' then
  local ttl = tonumber(ARGV[2])
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
  redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
  -- The set outlives its longest-lived member by a margin, never shortened by a
  -- member with a shorter TTL, so an abandoned fleet leaves nothing behind.
  local keep = 2 * ttl
  local pttl = redis.call('PTTL', KEYS[1])
  if pttl < keep then
    redis.call('PEXPIRE', KEYS[1], keep)
  end
end
return redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. now, '+inf')
