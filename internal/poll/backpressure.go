package poll

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/callbus/callbus/internal/cursor"
)

// outboxRecheck is how often a paused poller looks at the outbox again.
const outboxRecheck = time.Second

// Paused says why polling is paused ("" while it runs): the outbox reached
// Config.OutboxMax (a long NATS outage). It is safe for concurrent use (/readyz,
// metrics).
func (p *Poller) Paused() string {
	if r := p.guard.paused.Load(); r != nil {
		return *r
	}
	return ""
}

// holdForOutbox blocks while the outbox holds Config.OutboxMax events or more, so
// that a long NATS outage costs bounded Redis memory: nothing is dropped, the
// changes are read (later) instead of queued. It returns ctx's error when ctx
// ends, and nil once there is room or when the outbox cannot be read (the next
// commit then meets the same Redis trouble and reports it); cursor.ErrStaleLeader
// when a watermark committed meanwhile found the lease lost. seen is the outbox's
// length when the look before it read it (read), which spares a round trip.
func (p *Poller) holdForOutbox(ctx context.Context, seen int64, read bool) error {
	if p.cfg.OutboxMax <= 0 || (read && seen < p.cfg.OutboxMax) {
		return nil
	}
	logged := false
	defer p.guard.paused.Store(nil)
	for {
		n, err := p.store.OutboxLen(ctx)
		if err != nil || n < p.cfg.OutboxMax {
			if logged {
				p.log.Info().Int64("outbox", n).Msg("outbox below its limit: polling resumes")
			}
			return nil
		}
		reason := fmt.Sprintf("outbox full: %d events waiting for JetStream (limit %d); polling paused, nothing dropped", n, p.cfg.OutboxMax)
		p.guard.paused.Store(&reason)
		if !logged {
			p.log.Error().Int64("outbox", n).Int64("limit", p.cfg.OutboxMax).Msg("outbox full: polling paused until the relay publishes (is NATS reachable?)")
			logged = true
		}
		// Watermarks go on while paused (state paused, the marks still): one
		// event an interval, beyond the bound, tells consumers why nothing moves.
		if err := p.watermarkIfDue(ctx); errors.Is(err, cursor.ErrStaleLeader) {
			return err
		} else if err != nil && ctx.Err() == nil {
			p.log.Warn().Err(err).Msg("watermark not committed while paused; trying again")
		}
		t := time.NewTimer(outboxRecheck)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}
