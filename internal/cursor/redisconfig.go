package cursor

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// ErrEvictingRedis: Redis is configured to evict keys under memory pressure.
// callbus cannot run on it: an evicted snapshot makes the next poll announce its
// entity again (or lose a change), an evicted outbox loses events, an evicted lease
// lets a second leader in.
var ErrEvictingRedis = errors.New("redis evicts keys (maxmemory-policy is not noeviction)")

// RedisConfig is what CheckConfig read of the server's settings.
type RedisConfig struct {
	MaxMemoryPolicy string // "noeviction", "allkeys-lru", …; "" when unreadable
	AppendOnly      bool   // AOF on
	AppendFsync     string // "always", "everysec", "no"
	Save            string // RDB save points; "" when none
	// Unreadable is why the settings could not be read (CONFIG is often disabled
	// on managed Redis); empty when they were.
	Unreadable string
	// Unreachable is why no Redis answered at all (refused, timed out): then
	// nothing is known of its settings, and Unreadable is empty.
	Unreachable string
}

// Persistent reports whether the server writes its data to disk at all (AOF or
// RDB snapshots).
func (c RedisConfig) Persistent() bool {
	return c.AppendOnly || strings.TrimSpace(c.Save) != ""
}

// Warnings lists what callbus can run with but an operator should fix: no
// persistence (a restart loses every snapshot: calls are announced again), RDB
// only or AOF without fsync (a crash rolls the state back; callbus detects it
// from the stream, but only within the stream's retention), or settings it could
// not read.
func (c RedisConfig) Warnings() []string {
	if c.Unreachable != "" {
		return []string{"no Redis answers (" + c.Unreachable + "): check that redis-server runs at the configured address and accepts this client; callbus keeps trying"}
	}
	if c.Unreadable != "" {
		return []string{"cannot read the Redis settings (" + c.Unreadable + "): make sure maxmemory-policy is noeviction and persistence (AOF) is on"}
	}
	switch {
	case !c.Persistent():
		return []string{"Redis has no persistence (appendonly no, no save points): a Redis restart loses callbus's state; turn on AOF (appendonly yes, appendfsync everysec or always)"}
	case !c.AppendOnly:
		return []string{"Redis persists by RDB snapshots only: a crash rolls callbus's state back to the last snapshot; turn on AOF (appendonly yes)"}
	case c.AppendFsync == "no":
		return []string{"Redis AOF with appendfsync no: a power loss can roll callbus's state back by tens of seconds; use everysec or always"}
	}
	return nil
}

// CheckConfig reads the server's eviction and persistence settings. It returns
// ErrEvictingRedis (wrapped, naming the policy) for an evicting policy. When the
// settings cannot be read (CONFIG refused, Redis away) it returns no error and
// says why in Unreadable, or in Unreachable when no server answered: the caller
// warns and goes on.
func (s *Store) CheckConfig(ctx context.Context) (RedisConfig, error) {
	var c RedisConfig
	vals := map[string]string{}
	for _, name := range []string{"maxmemory-policy", "appendonly", "appendfsync", "save"} {
		m, err := s.rdb.ConfigGet(ctx, name).Result()
		var refused redis.Error // the server's own error reply: it answered
		if err != nil && !errors.As(err, &refused) {
			c.Unreachable = err.Error()
			return c, nil
		}
		if err != nil {
			c.Unreadable = fmt.Sprintf("CONFIG GET %s: %v", name, err)
			return c, nil
		}
		v, ok := m[name]
		if !ok {
			c.Unreadable = "CONFIG GET " + name + ": not answered"
			return c, nil
		}
		vals[name] = v
	}
	c.MaxMemoryPolicy = vals["maxmemory-policy"]
	c.AppendOnly = vals["appendonly"] == "yes"
	c.AppendFsync = vals["appendfsync"]
	c.Save = vals["save"]
	if c.MaxMemoryPolicy != "noeviction" {
		return c, fmt.Errorf("%w: maxmemory-policy is %q; set it to noeviction (CONFIG SET maxmemory-policy noeviction, or a dedicated Redis)", ErrEvictingRedis, c.MaxMemoryPolicy)
	}
	return c, nil
}
