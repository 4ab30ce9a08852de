package cursor

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// WithdrawOutbox notes that the relay withdraws the entries with the given
// outbox ids from the stream (deletes them there because they got ahead of an
// entry the stream lost) and returns how often each has been withdrawn so far,
// this time included. The relay publishes an entry withdrawn n times under a
// message id of its own for n (the stream remembers the earlier one for its
// duplicate window), so the count must outlive the relay's process: it is kept
// until TrimOutbox acknowledges the entry. It is not fenced.
func (s *Store) WithdrawOutbox(ctx context.Context, streamIDs []string) (map[string]int, error) {
	cmds := make([]*redis.IntCmd, len(streamIDs))
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range streamIDs {
			cmds[i] = p.HIncrBy(ctx, s.k.withdrew, id, 1)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("cursor withdraw outbox entries: %w", err)
	}
	out := make(map[string]int, len(streamIDs))
	for i, id := range streamIDs {
		out[id] = int(cmds[i].Val())
	}
	return out, nil
}

// OutboxWithdrawals returns how often each entry not yet acknowledged was
// withdrawn (see WithdrawOutbox), by outbox id; entries never withdrawn are
// left out.
func (s *Store) OutboxWithdrawals(ctx context.Context) (map[string]int, error) {
	all, err := s.rdb.HGetAll(ctx, s.k.withdrew).Result()
	if err != nil {
		return nil, fmt.Errorf("cursor outbox withdrawals: %w", err)
	}
	out := make(map[string]int, len(all))
	for id, v := range all {
		n, err := strconv.Atoi(v)
		if err != nil {
			return nil, fmt.Errorf("cursor outbox withdrawals: entry %s: count %q: %w", id, v, ErrInvalid)
		}
		out[id] = n
	}
	return out, nil
}
