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
	// DefaultAckRetentionBytes bounds the Redis memory the retention takes per
	// account whatever the rate: the bytes of the entries kept (their fields'
	// names and values; a batch entry holds a commit's events, compressed:
	// outbox_batch.go), the older entries dropped whole. A bound in bytes
	// rather than events, as Redis is sized in bytes: about 150 bytes per event
	// on the backlog benchmark, some 28,000 events, so a relay publishing more
	// than about 150 events a second, sustained, keeps less than the retention.
	DefaultAckRetentionBytes = 4 << 20
)

// trimBatch is how many stream entries one run of the trim script moves: a trim of a
// long backlog (reconcile skipping what an earlier relay published) runs as
// several short scripts rather than one that blocks Redis.
const trimBatch = 1024

// WithAckRetention keeps acknowledged outbox entries for d after TrimOutbox, and
// at most maxBytes of them (the older go first, whole entries); d == 0 keeps none
// (TrimOutbox drops entries, as before the retention existed). Default
// DefaultAckRetention and DefaultAckRetentionBytes.
func WithAckRetention(d time.Duration, maxBytes int) Option {
	return func(s *Store) error {
		if d < 0 || (d > 0 && maxBytes <= 0) {
			return fmt.Errorf("%w: acknowledged entries kept %s, at most %d bytes", ErrInvalid, d, maxBytes)
		}
		s.ackRetention, s.ackRetentionBytes = d, maxBytes
		return nil
	}
}

// TrimOutbox acknowledges every entry up to and including upToStreamID, and
// never a newer one: they leave the outbox (a batch entry, once its last event
// is acknowledged: until then readers skip the events up to upToStreamID that
// it holds, see outbox_batch.go) (ReadOutbox, OutboxLen) for the
// stream of acknowledged entries (ReadAcked), kept for the retention
// (WithAckRetention), and their withdrawals are forgotten (OutboxWithdrawals).
// Trimming up to an id that was already trimmed, or that the outbox never held,
// is fine. It is not fenced.
func (s *Store) TrimOutbox(ctx context.Context, upToStreamID string) error {
	if _, err := parseStreamID(upToStreamID); err != nil {
		return fmt.Errorf("cursor trim outbox: %w", err)
	}
	keys := []string{s.k.outbox, s.k.acked, s.k.ackMarks, s.k.withdrew, s.k.outboxMeta}
	for {
		n, err := trimScript.Run(ctx, s.rdb, keys, upToStreamID, s.ackRetention.Milliseconds(), s.ackRetentionBytes, trimBatch).Int()
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
// first, as ReadOutbox returns outbox entries: those in acked, then those still
// in the outbox's first batch entry.
func (s *Store) ReadAcked(ctx context.Context, afterStreamID string, count int) ([]event.Committed, error) {
	if count <= 0 {
		return nil, fmt.Errorf("cursor read acknowledged: %w: count %d", ErrInvalid, count)
	}
	recs, err := s.readEntries(ctx, s.k.acked, afterStreamID, count)
	if err != nil {
		return nil, fmt.Errorf("cursor read acknowledged: %w", err)
	}
	if len(recs) < count {
		if recs, err = s.readAckedInOutbox(ctx, recs, afterStreamID, count); err != nil {
			return nil, fmt.Errorf("cursor read acknowledged: %w", err)
		}
	}
	return recs, nil
}

// readAckedInOutbox appends to recs, read from acked after afterStreamID, the
// acknowledged events that are still in the outbox, in the batch entry whose
// last event is not acknowledged yet (see outboxTrimmed), up to count in all:
// they come after every entry of acked.
func (s *Store) readAckedInOutbox(ctx context.Context, recs []event.Committed, afterStreamID string, count int) ([]event.Committed, error) {
	trimmed, err := s.outboxTrimmed(ctx)
	if err != nil || trimmed == "" {
		return recs, err
	}
	from := afterStreamID
	if len(recs) > 0 {
		from = recs[len(recs)-1].StreamID
	}
	if c, err := CompareStreamIDs(from, trimmed); err != nil || c >= 0 {
		return recs, err
	}
	more, err := s.readEntries(ctx, s.k.outbox, from, count-len(recs))
	if err != nil {
		return nil, err
	}
	for _, r := range more {
		if c, err := CompareStreamIDs(r.StreamID, trimmed); err != nil || c > 0 {
			return recs, err
		}
		recs = append(recs, r)
	}
	return recs, nil
}
