-- Prelude of the scripts that write snapshot buckets (commit, prune).
--
-- A bucket's number is in its kind's bucket set (sb:<kind>) exactly while the
-- bucket holds something: a write adds it (bucket_written), and the script that
-- empties it removes it (bucket_emptied; Redis deletes an emptied hash on its own).
-- Both run inside one script, so a commit that fills the bucket again, before or
-- after, is never undone by a prune: scripts do not interleave.
--
-- in_set remembers the buckets this script added, so that a batch of many
-- snapshots of one bucket adds its number once.
local in_set = {}

local function bucket_written(set, bucket)
  local k = set .. ':' .. bucket
  if not in_set[k] then
    redis.call('SADD', KEYS[set], bucket)
    in_set[k] = true
  end
end

local function bucket_emptied(bk, set, bucket)
  if redis.call('EXISTS', KEYS[bk]) == 0 then
    redis.call('SREM', KEYS[set], bucket)
    in_set[set .. ':' .. bucket] = nil
  end
end
