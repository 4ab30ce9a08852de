package poll

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/callbus/callbus/internal/cursor"
)

// Announced is what the poller needs of the stream, the authority on what
// consumers saw (publish.History).
type Announced interface {
	// NewestOutboxID is the Callbus-Outbox-Id of the account's newest message
	// ("" when none).
	NewestOutboxID(ctx context.Context) (string, error)
	// Read calls fn with the outbox id and body of each of the account's messages
	// stored since the given time (zero: all), in stream order.
	Read(ctx context.Context, since time.Time, fn func(outboxID string, body []byte) error) error
}

// stateGuard is the poller's state for keeping Redis honest and bounded.
type stateGuard struct {
	missing      map[string]map[string]bool // kind → ids missing from the last list read (sweepGone)
	paused       atomic.Pointer[string]     // why polling is paused (holdForOutbox); nil while it runs
	announced    Announced                  // the stream, to reconcile with at each term (WithAnnounced)
	rollbacks    atomic.Int64               // terms that found Redis behind the stream
	lastOutboxID string                     // newest outbox id this leader committed (rollback.go)
	rolledBack   bool                       // a commit found Redis gone back in time (rollback.go)
}

// cursorReconciled is the newest outbox id of the stream the state was last
// rebuilt from: after a rebuild the outbox's own last id stays behind the stream
// until the next commit, and must not be taken for another rollback.
const cursorReconciled = "stream.reconciled_to"

// readMargin is how far before Redis's newest outbox entry the stream is read:
// Redis's and NATS's clocks may differ.
const readMargin = 10 * time.Minute

// WithAnnounced lets the poller check, at the start of each leader term, that
// Redis has not gone back in time behind the stream (see reconcileState). Without
// it there is no check.
func WithAnnounced(a Announced) Option { return func(p *Poller) { p.guard.announced = a } }

// Rollbacks counts the leader terms that found Redis behind the stream (rolled
// back or emptied) and rebuilt the state from it. Safe for concurrent use.
func (p *Poller) Rollbacks() int64 { return p.guard.rollbacks.Load() }

// reconcileState runs before the first commit of a leader term. When the stream
// holds messages whose outbox ids Redis has never generated (a restored RDB, an
// fsync lost with the power, a failover to a lagging replica, or every key gone),
// Redis went back in time: it logs so as an error, starts a new epoch (no id of
// the lost part can be derived again for something else) and rebuilds the
// snapshots of what the stream announced after Redis's point, so that nothing is
// announced again and every chain goes on from where consumers saw it. A stream
// that cannot be read (NATS away) skips the check for this term, with a warning.
func (p *Poller) reconcileState(ctx context.Context) error {
	if p.guard.announced == nil {
		return nil
	}
	check := RollbackCheck{At: time.Now().UTC(), Result: "ok"}
	defer func() {
		if b, err := json.Marshal(check); err == nil {
			p.noteOps(ctx, OpsRollbackCheck, string(b))
		}
	}()
	newest, err := p.guard.announced.NewestOutboxID(ctx)
	if err != nil {
		check.Result = "skipped: the stream could not be read: " + err.Error()
		p.log.Warn().Err(err).Msg("cannot read the stream's newest event: a Redis rollback would go unnoticed in this term")
		return nil
	}
	check.StreamNewest = newest
	last, err := p.store.OutboxLastID(ctx)
	if err != nil {
		check.Result = "failed: " + err.Error()
		return fmt.Errorf("read the outbox's last id: %w", err)
	}
	check.OutboxLast = last
	cur, err := p.store.Cursors(ctx)
	if err != nil {
		return fmt.Errorf("read cursors: %w", err)
	}
	known := last
	if c, err := cursor.CompareStreamIDs(cur[cursorReconciled], known); err == nil && c > 0 {
		known = cur[cursorReconciled]
	}
	ahead, err := cursor.CompareStreamIDs(newest, known)
	if err != nil {
		check.Result = "skipped: the stream's newest Callbus-Outbox-Id is not a Redis stream id"
		p.log.Warn().Err(err).Str("stream_newest", newest).Msg("the stream's newest Callbus-Outbox-Id is not a Redis stream id: rollback check skipped")
		return nil
	}
	if ahead <= 0 {
		return nil
	}
	p.guard.rollbacks.Add(1)
	check.Result = "rebuilt: Redis was behind the stream"
	p.log.Error().Str("stream_newest", newest).Str("redis_outbox_last", last).Str("reconciled_to", cur[cursorReconciled]).
		Msg("Redis went back in time: the stream holds events Redis never generated (restored snapshot, lost fsync, lagging replica or lost data); rebuilding the state from the stream")
	n, err := p.rebuild(ctx, known, newest)
	if err != nil {
		return fmt.Errorf("rebuild the state from the stream: %w", err)
	}
	p.log.Warn().Int("events", n).Str("epoch", p.scope.Epoch).Msg("state rebuilt from the stream; polling goes on in a new epoch")
	return nil
}
