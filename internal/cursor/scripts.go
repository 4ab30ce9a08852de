package cursor

import (
	_ "embed"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// The Lua scripts of the store. go-redis runs them with EVALSHA and falls back to
// EVAL when Redis does not know the digest (after a restart or failover). Every
// key a script touches is passed in KEYS, as Redis Cluster requires.
var (
	//go:embed lua/acquire.lua
	acquireLua string
	//go:embed lua/renew.lua
	renewLua string
	//go:embed lua/release.lua
	releaseLua string
	//go:embed lua/fence.lua
	fenceLua string
	//go:embed lua/buckets.lua
	bucketsLua string
	//go:embed lua/streamid.lua
	streamIDLua string
	//go:embed lua/commit.lua
	commitLua string
	//go:embed lua/prune.lua
	pruneLua string
	//go:embed lua/trim.lua
	trimLua string
)

// scripts are parsed once per process; they hold no state but their source and
// digest, so sharing them between stores is safe.
var (
	acquireScript = redis.NewScript(acquireLua)
	renewScript   = redis.NewScript(renewLua)
	releaseScript = redis.NewScript(releaseLua)
	commitScript  = redis.NewScript(fenceLua + streamIDLua + commitLua)
	pruneScript   = redis.NewScript(fenceLua + bucketsLua + pruneLua)
	trimScript    = redis.NewScript(streamIDLua + trimLua)
)

// refusal translates the {0, reason, holder, token} reply of a fenced script
// (and commit's {0, "rollback", outbox last id, caller's id}).
func refusal(reply []any) error {
	reason, _ := elem[string](reply, 1)
	holder, _ := elem[string](reply, 2)
	token, _ := elem[string](reply, 3)
	switch reason {
	case "rollback":
		return fmt.Errorf("%w: outbox last id %s, committed up to %s", ErrRolledBack, holder, token)
	case "fence":
		return fmt.Errorf("%w: a newer token (%s) has already written", ErrStaleLeader, token)
	case "lease":
		if holder == "" {
			return fmt.Errorf("%w: lease expired", ErrStaleLeader)
		}
		return fmt.Errorf("%w: lease now held by %q (token %s)", ErrStaleLeader, holder, token)
	}
	return fmt.Errorf("%w: %v", ErrStaleLeader, reply)
}

// elem returns reply[i] as T, reporting whether it was there with that type.
func elem[T any](reply []any, i int) (T, bool) {
	var zero T
	if i >= len(reply) {
		return zero, false
	}
	v, ok := reply[i].(T)
	return v, ok
}

// replySlice asserts the array reply of a script.
func replySlice(v any) ([]any, error) {
	r, ok := v.([]any)
	if !ok || len(r) == 0 {
		return nil, fmt.Errorf("unexpected script reply %T %v", v, v)
	}
	return r, nil
}
