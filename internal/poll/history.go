package poll

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/diff"
)

// Cursors of a backfill (internal/backfill owns their values).
const (
	// CursorBackfill holds the progress of a backfill under way (JSON), "" when
	// none is: while it is set the poller prunes nothing, so a backfill resumed
	// after a crash finds every call it committed still in the store.
	CursorBackfill = "backfill.progress"
	// CursorBackfillDone holds a summary of the last completed backfill.
	CursorBackfillDone = "backfill.done"
	// CursorBackfillIncomplete holds why the last backfill gave up (JSON), ""
	// when none did or a backfill completed since.
	CursorBackfillIncomplete = "backfill.incomplete"
	// CursorHighWater is the newest created_time seen: set once calls were read.
	CursorHighWater = cursorHighWater
	// cursorAnnounced: calls created at or after it were announced (by the live
	// poller, or a completed backfill), so one without a snapshot that is older
	// than the prune horizon was pruned, not never seen.
	cursorAnnounced = "calls.announced_from"
)

// History feeds records read elsewhere than the live lists (an account export)
// through the poller's own path: the same diffs against the same snapshots, the
// same batches committed atomically with their events and fenced by the lease. So
// history and live share event ids and chains: a record already announced (or
// older than what was) gives nothing, an open call continues its chain when the
// live poller sees it next. Its events carry the history attribute
// (event.Origin). Not safe for concurrent use.
type History struct {
	p         *Poller
	bt        *batcher
	pruned    time.Time // unknown calls created in [announced, pruned) were pruned
	announced time.Time
	legacy    bool // a state from before backfills: everything before pruned may have been announced
	highWater time.Time
	newest    time.Time
}

// History starts feeding history while lease is held. The poller must not Run at
// the same time. It reads the epoch (starting one on a fresh state), checks that
// Redis has not gone back in time behind the stream (reconcileState, with
// WithAnnounced) before anything of the term is committed, whatever commits
// first in the term (a backfill resumed before the live poller runs, or poller
// backfill alone), then reads the prune horizon and the high water. It returns
// ErrLostLease when the lease passed to another process.
func (p *Poller) History(ctx context.Context, lease func() cursor.Lease) (*History, error) {
	p.lease, p.history = lease, true
	p.guard.lastOutboxID, p.guard.rolledBack = "", false // a new term
	err := p.loadEpoch(ctx)
	if err == nil {
		err = p.reconcileState(ctx)
	}
	if errors.Is(err, cursor.ErrStaleLeader) {
		return nil, ErrLostLease
	}
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	cur, err := p.store.Cursors(ctx)
	if err != nil {
		return nil, fmt.Errorf("history: read cursors: %w", err)
	}
	h := &History{p: p, bt: p.newBatcher(ctx), pruned: parseTime(cur[cursorPruned]),
		announced: parseTime(cur[cursorAnnounced]), highWater: parseTime(cur[cursorHighWater])}
	h.legacy = h.announced.IsZero() && !h.highWater.IsZero()
	return h, nil
}

// Calls diffs calls of the export and queues the results (committed by Commit,
// or earlier when a batch fills).
func (h *History) Calls(calls []events.Call) error {
	var never, maybe []events.Call
	for _, c := range calls {
		if h.maybePruned(c.CreatedTime) {
			maybe = append(maybe, c)
		} else {
			never = append(never, c)
		}
	}
	// Calls that may have been pruned are diffed only while they still have a
	// snapshot: diffCalls skips unknown ones created before the horizon.
	for _, g := range []struct {
		calls  []events.Call
		pruned time.Time
	}{{never, time.Time{}}, {maybe, h.pruned}} {
		newest, err := h.p.diffCalls(h.bt.ctx, h.bt, g.calls, g.pruned)
		if newest.After(h.newest) {
			h.newest = newest
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// maybePruned reports whether an unknown call created at t may have been
// announced and pruned already.
func (h *History) maybePruned(t time.Time) bool {
	if h.pruned.IsZero() || !t.Before(h.pruned) {
		return false
	}
	return h.legacy || !t.Before(h.announced)
}

// Metrics diffs call metrics of the export: a metric whose call has no snapshot
// (not in the export, or pruned) is skipped.
func (h *History) Metrics(metrics []events.CallMetric) error {
	return h.p.diffMetrics(h.bt.ctx, h.bt, metrics)
}

// Users diffs users of the export against their snapshots (status names are read
// from the API once).
func (h *History) Users(ctx context.Context, users []events.User) error {
	if !h.p.hasNames {
		if err := h.p.pollStatuses(ctx); err != nil {
			return err
		}
	}
	seen := h.p.now()
	return h.p.diffAll(ctx, "users", kindUser, len(users), func(i int) int64 { return users[i].ID },
		func(i int, prev []byte) (diff.Result, error) {
			return diff.User(h.p.scope, prev, users[i], h.p.names, seen)
		}, nil)
}

// Teams diffs teams of the export against their snapshots.
func (h *History) Teams(ctx context.Context, teams []events.Team) error {
	seen := h.p.now()
	return h.p.diffAll(ctx, "teams", kindTeam, len(teams), func(i int) int64 { return teams[i].ID },
		func(i int, prev []byte) (diff.Result, error) { return diff.Team(h.p.scope, prev, teams[i], seen) }, nil)
}

// Commit commits what is queued together with the given cursors (the backfill's
// checkpoint), in one fenced commit, and moves the high water to the newest call
// seen, so the live poller continues where history ends. It returns
// ErrLostLease when the lease passed to another process.
func (h *History) Commit(cursors map[string]string) error {
	h.queueCursors(cursors)
	return historyErr(h.bt.flush())
}

// Checkpoint is Commit in the background: it starts committing what is queued
// with the cursors once the commit under way ended, and returns without waiting
// for this one, so the diff goes on meanwhile (the live path's batches do the
// same). Its failure is returned by whatever waits next: a Checkpoint, a
// Commit, or a diff whose batch fills up. The commit is as atomic as Commit's:
// a crash leaves the cursors of the last commit that landed.
func (h *History) Checkpoint(cursors map[string]string) error {
	h.queueCursors(cursors)
	return historyErr(h.bt.ship())
}

// queueCursors adds cursors, and the high water moved to the newest call seen,
// to the batch queued.
func (h *History) queueCursors(cursors map[string]string) {
	for k, v := range cursors {
		h.bt.cursor(k, v)
	}
	if h.newest.After(h.highWater) {
		h.bt.cursor(cursorHighWater, h.newest.Format(time.RFC3339Nano))
		h.highWater = h.newest
	}
}

// historyErr is a commit's error as History's methods return it.
func historyErr(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, cursor.ErrStaleLeader) {
		return ErrLostLease
	}
	return fmt.Errorf("history: %w", err)
}

// Done marks history from since on as announced, with the final checkpoint
// cursors: from now on an unknown call created after since and before the prune
// horizon was pruned, not never seen.
func (h *History) Done(since time.Time, cursors map[string]string) error {
	if !h.legacy && (h.announced.IsZero() || since.Before(h.announced)) {
		if cursors == nil {
			cursors = map[string]string{}
		}
		cursors[cursorAnnounced] = since.UTC().Format(time.RFC3339Nano)
		h.announced = since
	}
	return h.Commit(cursors)
}

// Abandon commits what is queued with the given cursors and puts the high water
// back to highWater (RFC 3339, "" for none: the state's before the history was
// fed), whatever calls the history saw: the live poller's first read then covers
// its Backfill span, or what it would have read after highWater, through paged
// reads, as if the history had not been fed; the calls it announced diff to
// nothing there. Nothing marks history as announced (see Done).
func (h *History) Abandon(highWater string, cursors map[string]string) error {
	h.newest = time.Time{}
	for k, v := range cursors {
		h.bt.cursor(k, v)
	}
	h.bt.cursor(cursorHighWater, highWater)
	h.highWater = parseTime(highWater)
	return h.Commit(nil)
}

// Events is how many events the history committed so far.
func (h *History) Events() int { return h.bt.events }

// Queued returns the events queued for commit so far, committed or not: what a
// Commit or Checkpoint made now covers.
func (h *History) Queued() int { return h.bt.queued }
