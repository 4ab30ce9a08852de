package service

import (
	"context"

	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/publish"
)

// outboxCache is how many of its own newest commits' entries an account's store
// keeps for the relay (cursor.WithOutboxCache): the relay reads them from memory
// instead of from Redis while it keeps up, as it does but for a few batches.
const outboxCache = 2 * cursor.RecommendedMaxEvents

// outbox adapts the store's outbox to the relay's interface (adapters do not
// import each other; the wiring joins them).
type outbox struct{ store *cursor.Store }

func (o outbox) ReadOutbox(ctx context.Context, after string, count int) ([]publish.Record, error) {
	return records(o.store.ReadOutbox(ctx, after, count))
}

func (o outbox) ReadAcked(ctx context.Context, after string, count int) ([]publish.Record, error) {
	return records(o.store.ReadAcked(ctx, after, count))
}

// records converts what the store read for the relay.
func records(recs []cursor.OutboxRecord, err error) ([]publish.Record, error) {
	if err != nil {
		return nil, err
	}
	out := make([]publish.Record, len(recs))
	for i, r := range recs {
		// A conversion, not a copy field by field: it compiles only while both
		// records hold the same fields, so they cannot drift apart.
		out[i] = publish.Record(r)
	}
	return out, nil
}

func (o outbox) TrimOutbox(ctx context.Context, upTo string) error {
	return o.store.TrimOutbox(ctx, upTo)
}

func (o outbox) Withdraw(ctx context.Context, ids []string) (map[string]int, error) {
	return o.store.WithdrawOutbox(ctx, ids)
}

func (o outbox) Withdrawals(ctx context.Context) (map[string]int, error) {
	return o.store.OutboxWithdrawals(ctx)
}
