package cursor

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// Counts are the sizes of the account's state, for metrics and /readyz.
type Counts struct {
	Snapshots map[string]int64 // per kind
	Open      int64            // open calls
	Terminal  int64            // terminal calls not yet pruned
	Cursors   int64
	Outbox    int64 // entries not yet trimmed
}

// Counts reads the sizes of the account's state in one pipeline (after reading
// the kinds); the figures are each exact but not one consistent snapshot.
func (s *Store) Counts(ctx context.Context) (Counts, error) {
	kinds, err := s.Kinds(ctx)
	if err != nil {
		return Counts{}, fmt.Errorf("cursor counts: %w", err)
	}
	var open, term, curs, outbox *redis.IntCmd
	snaps := make([]*redis.IntCmd, len(kinds))
	_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		open = p.ZCard(ctx, s.k.open)
		term = p.ZCard(ctx, s.k.terminal)
		curs = p.HLen(ctx, s.k.cursor)
		outbox = p.XLen(ctx, s.k.outbox)
		for i, k := range kinds {
			snaps[i] = p.HLen(ctx, s.k.snap(k))
		}
		return nil
	})
	if err != nil {
		return Counts{}, fmt.Errorf("cursor counts: %w", err)
	}
	c := Counts{
		Snapshots: make(map[string]int64, len(kinds)),
		Open:      open.Val(),
		Terminal:  term.Val(),
		Cursors:   curs.Val(),
		Outbox:    outbox.Val(),
	}
	for i, k := range kinds {
		c.Snapshots[k] = snaps[i].Val()
	}
	return c, nil
}
