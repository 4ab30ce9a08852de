package poll

import (
	"context"
	"errors"
	"fmt"

	"github.com/callbus/callbus/internal/cursor"
)

// errRolledBack: Redis's outbox is behind what this leader committed to it:
// Redis went back in time during the term (restored, failed over, restarted
// without its last writes) while the lease survived. Nothing more is committed
// until the state is reconciled with the stream (beforeCycle).
var errRolledBack = errors.New("redis went back in time behind this leader's commits")

// guardCommit is called before each commit: it refuses to write on a Redis whose
// outbox lost entries this leader committed, so that no event is derived from
// rolled-back snapshots (which the stream has moved past).
func (p *Poller) guardCommit(ctx context.Context) error {
	if p.guard.lastOutboxID == "" {
		return nil
	}
	cur, err := p.store.OutboxLastID(ctx)
	if err != nil {
		return fmt.Errorf("read the outbox's last id: %w", err)
	}
	if c, err := cursor.CompareStreamIDs(cur, p.guard.lastOutboxID); err == nil && c < 0 {
		return fmt.Errorf("%w: outbox last id %s, committed up to %s", errRolledBack, cur, p.guard.lastOutboxID)
	}
	return nil
}

// noteCommitted remembers the newest outbox id this leader committed.
func (p *Poller) noteCommitted(r cursor.CommitResult) {
	if n := len(r.StreamIDs); n > 0 {
		p.guard.lastOutboxID = r.StreamIDs[n-1]
	}
}

// beforeCycle runs before each poll cycle: it waits while the outbox is full
// (holdForOutbox) and reconciles with the stream when Redis went back in time
// since the last commit.
func (p *Poller) beforeCycle(ctx context.Context) error {
	if err := p.holdForOutbox(ctx); err != nil {
		return err
	}
	if err := p.guardCommit(ctx); !errors.Is(err, errRolledBack) {
		return nil // fine, or Redis away: the cycle meets it and retries
	}
	p.guard.lastOutboxID = ""
	return p.reconcileState(ctx)
}
