package cursor

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// MemoryUsage returns the bytes Redis uses for the account's keys (MEMORY USAGE
// with every nested value sampled), in total and per key, the keys named without
// the account prefix ("open", "snap:call", ...). Missing keys are left out. It
// walks every element of large hashes, so it is for benchmarks and occasional
// diagnostics, not for a scrape every few seconds.
func (s *Store) MemoryUsage(ctx context.Context) (int64, map[string]int64, error) {
	kinds, err := s.Kinds(ctx)
	if err != nil {
		return 0, nil, fmt.Errorf("cursor memory usage: %w", err)
	}
	all := []string{s.k.lease, s.k.seq, s.k.fence, s.k.kinds, s.k.open, s.k.terminal, s.k.cursor, s.k.outbox}
	for _, kind := range kinds {
		all = append(all, s.k.snap(kind))
	}
	var total int64
	per := make(map[string]int64, len(all))
	for _, key := range all {
		n, err := s.rdb.MemoryUsage(ctx, key, 0).Result()
		if errors.Is(err, redis.Nil) {
			continue
		}
		if err != nil {
			return 0, nil, fmt.Errorf("cursor memory usage %s: %w", key, err)
		}
		per[strings.TrimPrefix(key, s.k.prefix)] = n
		total += n
	}
	return total, per, nil
}
