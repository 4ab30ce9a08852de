-- Prelude of prune.lua, which empties snapshot buckets (commit.lua does the
-- same with the SADD and guarded SREM commands commit_ops.go lays out).
--
-- A bucket's number is in its kind's bucket set (sb:<kind>) exactly while the
-- bucket holds something: a commit that writes to it adds it, and the script
-- that empties it removes it (bucket_emptied; Redis deletes an emptied hash on
-- its own). Both run inside one script, so a commit that fills the bucket
-- again, before or after, is never undone by a prune: scripts do not interleave.

local function bucket_emptied(bk, set, bucket)
  if redis.call('EXISTS', KEYS[bk]) == 0 then
    redis.call('SREM', KEYS[set], bucket)
  end
end
