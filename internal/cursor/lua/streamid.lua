-- Prelude of commit.lua: the outbox's last generated id and stream id order.

-- outbox_last_id is the id of the newest entry ever appended to the stream key
-- (kept across trims), or '0-0' when the stream does not exist.
local function outbox_last_id(key)
  if redis.call('EXISTS', key) == 0 then
    return '0-0'
  end
  local info = redis.call('XINFO', 'STREAM', key)
  for j = 1, #info - 1, 2 do
    if info[j] == 'last-generated-id' then
      return info[j + 1]
    end
  end
  return '0-0'
end

-- stream_id_less reports whether stream id a ("<ms>-<seq>") comes before b. Both
-- parts stay below 2^53 for any real clock and sequence, so Lua numbers hold them.
local function stream_id_less(a, b)
  local am, as = string.match(a, '^(%d+)-(%d+)$')
  local bm, bs = string.match(b, '^(%d+)-(%d+)$')
  am, as, bm, bs = tonumber(am), tonumber(as), tonumber(bm), tonumber(bs)
  if am ~= bm then
    return am < bm
  end
  return as < bs
end


-- stream_id_next is the smallest stream id after a ("<ms>-<seq>").
local function stream_id_next(a)
  local am, as = string.match(a, '^(%d+)-(%d+)$')
  return am .. '-' .. string.format('%d', tonumber(as) + 1)
end
