package cursor

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// OpenCalls returns the open calls, oldest created first: the first limit of
// them, or all when limit <= 0. Commit keeps the index; it reads without checking
// the lease.
func (s *Store) OpenCalls(ctx context.Context, limit int) ([]Tracked, error) {
	t, err := s.tracked(ctx, s.k.open, limit)
	if err != nil {
		return nil, fmt.Errorf("cursor open calls: %w", err)
	}
	return t, nil
}

// TerminalCalls returns the terminal calls not yet pruned, earliest ended first:
// the first limit of them, or all when limit <= 0.
func (s *Store) TerminalCalls(ctx context.Context, limit int) ([]Tracked, error) {
	t, err := s.tracked(ctx, s.k.terminal, limit)
	if err != nil {
		return nil, fmt.Errorf("cursor terminal calls: %w", err)
	}
	return t, nil
}

func (s *Store) tracked(ctx context.Context, key string, limit int) ([]Tracked, error) {
	stop := int64(-1)
	if limit > 0 {
		stop = int64(limit) - 1
	}
	zs, err := s.rdb.ZRangeWithScores(ctx, key, 0, stop).Result()
	if err != nil {
		return nil, err
	}
	return toTracked(zs), nil
}

func toTracked(zs []redis.Z) []Tracked {
	out := make([]Tracked, 0, len(zs))
	for _, z := range zs {
		id, _ := z.Member.(string)
		out = append(out, Tracked{ID: id, At: time.UnixMilli(int64(z.Score))})
	}
	return out
}
