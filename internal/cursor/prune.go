package cursor

import (
	"context"
	"fmt"
	"time"
)

// Prune forgets up to limit terminal calls that ended before horizon, earliest
// first: each leaves the terminal index, and its snapshots of the prune kinds
// (DefaultPruneKinds unless WithPruneKinds) are deleted. Open calls are never
// pruned. Like Commit it is one fenced script: a stale lease gets ErrStaleLeader
// and nothing is removed. It returns how many calls it pruned; call it again
// while that equals limit to catch up.
func (s *Store) Prune(ctx context.Context, l Lease, horizon time.Time, limit int) (int, error) {
	if limit <= 0 {
		return 0, fmt.Errorf("cursor prune: %w: limit %d", ErrInvalid, limit)
	}
	if l.Holder == "" || l.Token <= 0 {
		return 0, fmt.Errorf("cursor prune: %w: lease without holder or token", ErrInvalid)
	}
	keys := []string{s.k.lease, s.k.fence, s.k.open, s.k.terminal}
	for _, kind := range s.pruneKinds {
		keys = append(keys, s.k.snap(kind))
	}
	v, err := pruneScript.Run(ctx, s.rdb, keys, l.Holder, l.Token, horizon.UnixMilli(), limit).Result()
	if err != nil {
		return 0, fmt.Errorf("cursor prune: %w", err)
	}
	r, err := replySlice(v)
	if err != nil {
		return 0, fmt.Errorf("cursor prune: %w", err)
	}
	if ok, _ := elem[int64](r, 0); ok != 1 {
		return 0, fmt.Errorf("cursor prune: %w", refusal(r))
	}
	n, _ := elem[int64](r, 1)
	return int(n), nil
}
