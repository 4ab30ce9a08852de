-- Read, and on a heartbeat renew, the fleet's membership, in Redis's own clock
-- (TIME, ms), so the replicas' clocks never matter. Three keys of one hash tag
-- (one Redis Cluster slot):
-- KEYS[1] members: sorted set of replica names scored by their expiry
-- KEYS[2] joined:  hash replica → when it joined (set again when it rejoins after
--                  expiring; removed when it expires or leaves)
-- KEYS[3] arrived: hash account → "replica|ms": when that replica took the
--                  account (entries of a replica that expired or left removed)
-- ARGV[1] replica, ARGV[2] ttl (ms), ARGV[3] mode: "beat" renews, "read" only
-- reads, "leave" removes the replica; ARGV[4..] (beat) the accounts the replica
-- runs: an account whose entry names another replica, or none, gets "replica|now".
-- Reply (beat, read): {{member, joined, ...} of the live members, {account,
-- "replica|ms", ...}}; (leave): 1 if it was a member.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local me = ARGV[1]

-- holder is the replica of an arrived entry (a replica's name may hold '|').
local function holder(v)
  return string.match(v, '^(.*)|%d+$')
end

-- forget removes a replica's joined time and its arrived entries.
local function forget(replica)
  redis.call('HDEL', KEYS[2], replica)
  local a = redis.call('HGETALL', KEYS[3])
  for i = 1, #a, 2 do
    if holder(a[i + 1]) == replica then
      redis.call('HDEL', KEYS[3], a[i])
    end
  end
end

if ARGV[3] == 'leave' then
  local was = redis.call('ZREM', KEYS[1], me)
  forget(me)
  return was
end

if ARGV[3] == 'beat' then
  local ttl = tonumber(ARGV[2])
  local gone = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now)
  for _, m in ipairs(gone) do
    if m ~= me then
      forget(m)
    end
  end
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
  -- A replica that is not a live member (new, or expired and back) joins now.
  if redis.call('ZSCORE', KEYS[1], me) then
    redis.call('HSETNX', KEYS[2], me, now)
  else
    redis.call('HSET', KEYS[2], me, now)
  end
  redis.call('ZADD', KEYS[1], now + ttl, me)
  for i = 4, #ARGV do
    local v = redis.call('HGET', KEYS[3], ARGV[i])
    if not v or holder(v) ~= me then
      redis.call('HSET', KEYS[3], ARGV[i], me .. '|' .. now)
    end
  end
  -- The keys outlive the longest-lived member by a margin, never shortened by a
  -- member with a shorter TTL, so an abandoned fleet leaves nothing behind.
  local keep = 2 * ttl
  for k = 1, 3 do
    if redis.call('PTTL', KEYS[k]) < keep then
      redis.call('PEXPIRE', KEYS[k], keep)
    end
  end
end

local live = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. now, '+inf')
local members = {}
for _, m in ipairs(live) do
  members[#members + 1] = m
  members[#members + 1] = redis.call('HGET', KEYS[2], m) or '0'
end
return {members, redis.call('HGETALL', KEYS[3])}
