package poll

import (
	"context"
	"errors"

	"github.com/callbus/callbus/internal/cursor"
)

// guarded returns b with the rollback guard set: the commit script refuses it
// (cursor.ErrRolledBack), in the same round trip, when the outbox's last id is
// older than the newest one this leader committed, i.e. Redis went back in time
// during the term (restored, failed over, restarted without its last writes)
// while the lease survived. No event is then derived from rolled-back snapshots
// (which the stream has moved past).
func (p *Poller) guarded(b cursor.Batch) cursor.Batch {
	b.OutboxSeen = p.guard.lastOutboxID
	return b
}

// noteCommit remembers the newest outbox id this leader committed, or that a
// commit found Redis gone back in time (reconciled before the next cycle).
func (p *Poller) noteCommit(r cursor.CommitResult, err error) {
	if errors.Is(err, cursor.ErrRolledBack) {
		p.guard.rolledBack = true
		return
	}
	if n := len(r.StreamIDs); err == nil && n > 0 {
		p.guard.lastOutboxID = r.StreamIDs[n-1]
	}
}

// beforeCycle runs before each poll cycle, and at idle wakes, with what the
// look before it found (w; read: the outbox's length was read): when hold (what
// follows commits events) it waits while the outbox is full (holdForOutbox); it
// acts on operators' requests (serveRequests) and reconciles with the stream
// when a commit found that Redis went back in time.
func (p *Poller) beforeCycle(ctx context.Context, w cursor.Waiting, read, hold bool) error {
	if hold {
		if err := p.holdForOutbox(ctx, w.Outbox, read); err != nil {
			return err
		}
	}
	if err := p.serveRequests(ctx, w.Requests); err != nil {
		return err
	}
	if !p.guard.rolledBack {
		return nil
	}
	p.guard.rolledBack, p.guard.lastOutboxID = false, ""
	return p.reconcileState(ctx)
}
