package poll

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/diff"
)

// rebuilder replays what the stream announced onto the snapshots Redis kept, so
// that the next polls find the world as consumers last saw it. The events the
// diffs produce on the way are dropped: they were announced already.
type rebuilder struct {
	p       *Poller
	ctx     context.Context
	snaps   map[cursor.Ref][]byte // rebuilt or read; nil: none
	read    map[cursor.Ref]bool
	dirty   map[cursor.Ref]bool  // changed by the replay: to commit
	open    map[string]time.Time // calls Redis did not know: tracked as open from their creation
	horizon time.Time            // calls created before it are left alone (pruned, or past the backfill)
	// history: with a backfill under way, calls created before it (and after
	// horizon) are rebuilt without being tracked as open: the backfill reads
	// them again, the live lists do not.
	history time.Time
}

// rebuild replays the account's messages with outbox ids after `after` (Redis's
// point) in a new epoch, and commits the snapshots, the new epoch and newest as
// the point the state was reconciled to. It returns how many events it replayed.
func (p *Poller) rebuild(ctx context.Context, after, newest string) (int, error) {
	since, err := cursor.StreamIDTime(after)
	if err != nil {
		return 0, err
	}
	if !since.IsZero() {
		since = since.Add(-readMargin)
	}
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return 0, fmt.Errorf("new epoch: %w", err)
	}
	epoch := hex.EncodeToString(b[:])
	p.scope = diff.Scope{Account: p.cfg.Account, Epoch: epoch}
	cur, err := p.store.Cursors(ctx)
	if err != nil {
		return 0, fmt.Errorf("read cursors: %w", err)
	}
	rb := &rebuilder{p: p, ctx: ctx, snaps: map[cursor.Ref][]byte{}, read: map[cursor.Ref]bool{}, dirty: map[cursor.Ref]bool{}, open: map[string]time.Time{},
		horizon: parseTime(cur[cursorPruned])}
	if rb.horizon.IsZero() { // no state: what the first read will cover
		rb.horizon = p.now().Add(-p.cfg.Backfill)
	}
	if cur[CursorBackfill] != "" {
		// A backfill under way resumes from its checkpoint and reads again the
		// history the stream has after it, however old: the calls it announced
		// need their snapshots, or it would announce them again.
		rb.history, rb.horizon = rb.horizon, time.Time{}
	}
	n := 0
	err = p.guard.announced.Read(ctx, since, func(oid string, body []byte) error {
		if c, err := cursor.CompareStreamIDs(oid, after); err != nil || c <= 0 {
			return nil // Redis has it (or not one of ours)
		}
		n++
		return rb.apply(body)
	})
	if err != nil {
		return n, err
	}
	return n, rb.commit(epoch, newest)
}

// apply replays one announced event.
func (rb *rebuilder) apply(body []byte) error {
	ev, err := events.Decode(body)
	if err != nil {
		rb.p.log.Warn().Err(err).Msg("rebuild: an event in the stream does not decode; skipped")
		return nil
	}
	switch e := ev.(type) {
	case *events.CallCreatedEvent:
		return rb.call(e.Data.Call)
	case *events.CallUpdatedEvent:
		return rb.call(e.Data.Call)
	case *events.CallEndedEvent:
		return rb.call(e.Data.Call)
	case *events.ParticipantJoinedEvent:
		return rb.participant(e.Data.CallID, e.Data.Participant)
	case *events.ParticipantStatusChangedEvent:
		return rb.participant(e.Data.CallID, e.Data.Participant)
	case *events.MetricFinalizedEvent:
		return rb.metric(e.Data.Metric)
	case *events.MetricUpdatedEvent:
		return rb.metric(e.Data.Metric)
	case *events.UserCreatedEvent:
		return rb.user(e.Data.User)
	case *events.UserUpdatedEvent:
		return rb.user(e.Data.User)
	case *events.UserDeletedEvent:
		return rb.user(e.Data.User)
	case *events.UserStatusChangedEvent:
		return rb.user(e.Data.User)
	case *events.TeamCreatedEvent:
		return rb.team(e.Data)
	case *events.TeamUpdatedEvent:
		return rb.team(e.Data)
	}
	return nil
}

// get returns the entity's snapshot as rebuilt so far (read from Redis once).
func (rb *rebuilder) get(kind string, id int64) ([]byte, error) {
	ref := cursor.Ref{Kind: kind, ID: fmt.Sprint(id)}
	if !rb.read[ref] {
		m, err := rb.p.store.GetSnapshots(rb.ctx, kind, []string{ref.ID})
		if err != nil {
			return nil, fmt.Errorf("read %s %s: %w", kind, ref.ID, err)
		}
		rb.read[ref], rb.snaps[ref] = true, m[ref.ID]
	}
	return rb.snaps[ref], nil
}

func (rb *rebuilder) set(kind string, id int64, snap []byte) {
	ref := cursor.Ref{Kind: kind, ID: fmt.Sprint(id)}
	rb.read[ref], rb.snaps[ref], rb.dirty[ref] = true, snap, true
}
