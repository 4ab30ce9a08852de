-- Prelude of every fenced write (commit, prune); the script body follows it.
-- KEYS[1] lease, KEYS[2] fence; ARGV[1] holder, ARGV[2] token.
--
-- fence_check returns nil when the caller still leads: the lease holds its holder
-- and token, and no newer token has written (token >= fence); it then raises the
-- fence to the token. Otherwise it returns the refusal reply
-- {0, reason, current holder or fence, current token}, and nothing was written.
local function fence_check()
  local cur = redis.call('HMGET', KEYS[1], 'holder', 'token')
  if cur[1] ~= ARGV[1] or cur[2] ~= ARGV[2] then
    return {0, 'lease', cur[1] or '', cur[2] or ''}
  end
  local fence = redis.call('GET', KEYS[2])
  if fence and tonumber(fence) > tonumber(ARGV[2]) then
    return {0, 'fence', cur[1], fence}
  end
  if fence ~= ARGV[2] then
    redis.call('SET', KEYS[2], ARGV[2])
  end
  return nil
end

