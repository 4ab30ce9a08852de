package cursor

import (
	"context"
	"fmt"
	"time"
)

// Holds confirms that l is still the account's lease (same holder and token) and
// returns its remaining time to live: the relay publishes only within it, so that
// a leader paused past its lease publishes nothing after it wakes. When another
// holder has the lease, or none does, it returns a *NotLeaderError (errors.Is
// ErrNotLeader); other errors are Redis failures. It reads, never writes.
func (s *Store) Holds(ctx context.Context, l Lease) (time.Duration, error) {
	holder, token, ttl, err := s.Leader(ctx)
	if err != nil {
		return 0, fmt.Errorf("cursor holds: %w", err)
	}
	if holder != l.Holder || token != l.Token || ttl <= 0 {
		return 0, fmt.Errorf("cursor holds: %w", &NotLeaderError{Holder: holder, Token: token, TTL: ttl})
	}
	return ttl, nil
}
