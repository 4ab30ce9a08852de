package poll

import (
	"context"
	"iter"
	"time"

	"github.com/callbus/callbus/internal/cursor"
)

// Store is what the poller needs of the Redis store (cursor.Store). Writes go
// through Commit only, fenced by the lease.
type Store interface {
	GetSnapshots(ctx context.Context, kind string, ids []string) (map[string][]byte, error)
	AllSnapshots(ctx context.Context, kind string) iter.Seq2[cursor.Snapshot, error]
	OpenCalls(ctx context.Context, limit int) ([]cursor.Tracked, error)
	Cursors(ctx context.Context) (map[string]string, error)
	// ReadCallsCycle is Cursors, OpenCalls(ctx, 0) and whether kind holds a
	// snapshot, in one round trip.
	ReadCallsCycle(ctx context.Context, kind string) (cursor.CallsCycle, error)
	Commit(ctx context.Context, l cursor.Lease, b cursor.Batch) (cursor.CommitResult, error)
	// Limits are the hard limits of one Batch: items and bytes.
	Limits() (items, bytes int)
	Prune(ctx context.Context, l cursor.Lease, horizon time.Time, limit int) (int, error)
	OutboxLen(ctx context.Context) (int64, error)
	OutboxLastID(ctx context.Context) (string, error)
}

// Snapshot kinds and cursor names in the store.
const (
	kindCall   = "call"
	kindMetric = "metric"
	kindUser   = "user"
	kindTeam   = "team"
	// kindParts holds the record of a call being committed in parts, from
	// the first part to the last (batch.go, resumeParts).
	kindParts = "call.parts"

	cursorEpoch     = "epoch"               // the state's epoch, part of every event id (diff.Scope)
	cursorHighWater = "calls.high_water"    // newest created_time seen (RFC 3339)
	cursorPruned    = "calls.pruned_before" // calls created before it may be pruned: ignore them
)
