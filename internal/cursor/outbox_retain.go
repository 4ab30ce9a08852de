package cursor

import (
	"context"
	"fmt"
	"time"

	"github.com/callbus/callbus/internal/event"
)

// JetStream acknowledges a message before it is on disk (the server's
// sync_interval, 2 minutes by default): a power loss of the NATS servers, or a
// store restored from an older copy, loses messages the relay saw
// acknowledged. So TrimOutbox does not drop acknowledged entries at once: it
// moves them to a stream of their own (outbox:acked, same ids and fields), kept
// for a retention counted from the acknowledgement, from which the relay
// publishes again what the stream lost (ReadAcked).
const (
	// DefaultAckRetention outlasts the NATS server's default sync_interval.
	DefaultAckRetention = 3 * time.Minute
	// DefaultAckRetentionMax bounds the entries kept whatever the rate: at
	// about 1 KB each, some 50 MB of Redis per account at most. A faster relay
	// keeps its last DefaultAckRetentionMax entries, less than the retention.
	DefaultAckRetentionMax = 50_000
)

// trimBatch is how many entries one run of the trim script moves: a trim of a
// long backlog (reconcile skipping what an earlier relay published) runs as
// several short scripts rather than one that blocks Redis.
const trimBatch = 1024

// WithAckRetention keeps acknowledged outbox entries for d after TrimOutbox, and
// at most max of them (the older go first); d == 0 keeps none (TrimOutbox drops
// entries, as before the retention existed). Default DefaultAckRetention and
// DefaultAckRetentionMax.
func WithAckRetention(d time.Duration, max int) Option {
	return func(s *Store) error {
		if d < 0 || (d > 0 && max <= 0) {
			return fmt.Errorf("%w: acknowledged entries kept %s, at most %d", ErrInvalid, d, max)
		}
		s.ackRetention, s.ackRetentionMax = d, max
		return nil
	}
}

// TrimOutbox acknowledges every entry up to and including upToStreamID, and
// never a newer one: they leave the outbox (ReadOutbox, OutboxLen) for the
// stream of acknowledged entries (ReadAcked), kept for the retention
// (WithAckRetention), and their withdrawals are forgotten (OutboxWithdrawals).
// Trimming up to an id that was already trimmed, or that the outbox never held,
// is fine. It is not fenced.
func (s *Store) TrimOutbox(ctx context.Context, upToStreamID string) error {
	if _, err := parseStreamID(upToStreamID); err != nil {
		return fmt.Errorf("cursor trim outbox: %w", err)
	}
	keys := []string{s.k.outbox, s.k.acked, s.k.ackMarks, s.k.withdrew}
	for {
		n, err := trimScript.Run(ctx, s.rdb, keys, upToStreamID, s.ackRetention.Milliseconds(), s.ackRetentionMax, trimBatch).Int()
		if err != nil {
			return fmt.Errorf("cursor trim outbox to %s: %w", upToStreamID, err)
		}
		if n < trimBatch {
			return nil
		}
	}
}

// ReadAcked returns up to count of the acknowledged entries kept (see
// TrimOutbox) that come after afterStreamID ("" for the oldest kept), oldest
// first, as ReadOutbox returns outbox entries.
func (s *Store) ReadAcked(ctx context.Context, afterStreamID string, count int) ([]event.Committed, error) {
	if count <= 0 {
		return nil, fmt.Errorf("cursor read acknowledged: %w: count %d", ErrInvalid, count)
	}
	recs, err := s.readEntries(ctx, s.k.acked, afterStreamID, count)
	if err != nil {
		return nil, fmt.Errorf("cursor read acknowledged: %w", err)
	}
	return recs, nil
}
