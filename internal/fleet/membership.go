package fleet

import (
	"context"
	_ "embed"
	"fmt"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"
)

//go:embed lua/members.lua
var membersLua string

// membersScript reads and renews the membership set; go-redis runs it with
// EVALSHA and falls back to EVAL after a restart or failover.
var membersScript = redis.NewScript(membersLua)

// membersKey is the one key of the fleet's membership: a single key lives in a
// single Redis Cluster slot, so the script never crosses slots.
func membersKey(name string) string { return "callbus:fleet:{" + name + "}:members" }

// readMembers renews this replica's membership for the TTL (heartbeat), or only reads
// the live members (beat false). It returns them sorted.
func (f *Fleet) readMembers(ctx context.Context, beat bool) ([]string, error) {
	mode := "read"
	if beat {
		mode = "beat"
	}
	ctx, cancel := context.WithTimeout(ctx, f.redisTimeout())
	defer cancel()
	v, err := membersScript.Run(ctx, f.rdb, []string{f.key}, f.replica, f.ttl.Milliseconds(), mode).StringSlice()
	if err != nil {
		return nil, fmt.Errorf("fleet %s membership: %w", mode, err)
	}
	slices.Sort(v)
	return v, nil
}

// leave removes this replica's membership, so the others take its accounts at
// their next check rather than after the TTL.
func (f *Fleet) leave(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, f.redisTimeout())
	defer cancel()
	if err := f.rdb.ZRem(ctx, f.key, f.replica).Err(); err != nil {
		return fmt.Errorf("fleet leave: %w", err)
	}
	return nil
}

// redisTimeout bounds one membership call: a stalled Redis must not hold the
// loop past the next heartbeat.
func (f *Fleet) redisTimeout() time.Duration { return max(f.ttl/3, 100*time.Millisecond) }
