package cursor

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// Counts are the sizes of the account's state, for metrics and /readyz.
type Counts struct {
	Snapshots map[string]int64 // per kind
	Open      int64            // open calls
	Terminal  int64            // terminal calls not yet pruned
	Cursors   int64
	Outbox    int64 // events not yet trimmed (OutboxLen)
}

// Counts reads the sizes of the account's state; the figures are each exact but
// not one consistent snapshot.
func (s *Store) Counts(ctx context.Context) (Counts, error) {
	kinds, err := s.Kinds(ctx)
	if err != nil {
		return Counts{}, fmt.Errorf("cursor counts: %w", err)
	}
	var open, term, curs, outbox *redis.IntCmd
	var more *redis.StringCmd
	var tb *redis.StringSliceCmd
	_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		open = p.ZCard(ctx, s.k.open)
		term = p.ZCard(ctx, s.k.terminal)
		curs = p.HLen(ctx, s.k.cursor)
		outbox = p.XLen(ctx, s.k.outbox)
		more = p.HGet(ctx, s.k.outboxMeta, "more")
		tb = p.ZRange(ctx, s.k.tb, 0, -1)
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return Counts{}, fmt.Errorf("cursor counts: %w", err)
	}
	keys := make([]string, 0, len(tb.Val()))
	for _, b := range tb.Val() {
		keys = append(keys, s.k.terminalBucket(b))
	}
	bucketed, err := s.hlenSum(ctx, keys)
	if err != nil {
		return Counts{}, fmt.Errorf("cursor counts: %w", err)
	}
	c := Counts{
		Snapshots: make(map[string]int64, len(kinds)),
		Open:      open.Val(),
		Terminal:  term.Val() + bucketed,
		Cursors:   curs.Val(),
		Outbox:    outboxEvents(outbox.Val(), more.Val()),
	}
	for _, k := range kinds {
		if c.Snapshots[k], err = s.SnapshotCount(ctx, k); err != nil {
			return Counts{}, fmt.Errorf("cursor counts: %w", err)
		}
	}
	return c, nil
}
