package poll

import (
	"context"
	"time"

	"github.com/callbus/callbus/internal/cursor"
)

// lookEvery is how often a leader looks at the operators' requests and the
// resync queue: between cycles and, idle, at a wake of its own. An operator
// waits up to this long for a rewind or a resync to start; a replica pays one
// round trip per account per lookEvery (a tenth of its CPU at 1 s with the
// intervals at their targets, and at 2 s the looks were still an eighth of a
// 2,000-account replica's CPU, half of them the idle wakes for the queues
// alone). At 5 s most come with a cycle's own look.
const lookEvery = 5 * time.Second

// looking is what the leader asks the store between its cycles (look).
type looking struct {
	notes map[string]string // ops notes not written yet: they go with the next look
	last  time.Time         // the last look at the queues
}

// look asks the store, in one round trip (cursor.Store.Look), what the leader
// must know before its next step: the outbox's length when a cycle is due
// (holdForOutbox), the queues' lengths every lookEvery, and writes the ops notes
// taken since the last look. An idle account's leader thus costs Redis one round
// trip every lookEvery, where asking each question apart cost four a second. read says whether
// the outbox's length was read; without Ops (or when Redis did not answer)
// nothing is known: the outbox is read by holdForOutbox, the queues by their
// own fallbacks.
func (p *Poller) look(ctx context.Context, cycleDue bool) (w cursor.Waiting, read bool) {
	if p.ops == nil {
		return cursor.Waiting{}, false
	}
	now := time.Now()
	l := cursor.Look{Notes: p.between.notes, Outbox: cycleDue && p.cfg.OutboxMax > 0, Queues: now.Sub(p.between.last) >= lookEvery}
	if !l.Outbox && !l.Queues {
		return cursor.Waiting{}, false // the notes wait for the next look: no round trip of their own
	}
	if l.Queues {
		p.between.last = now
	}
	w, err := p.ops.Look(ctx, l)
	if err != nil {
		if ctx.Err() == nil {
			p.log.Warn().Err(err).Msg("cannot look at the outbox and the operators' queues; trying again next cycle")
		}
		return cursor.Waiting{}, false
	}
	p.between.notes = nil
	return w, l.Outbox
}

// noteCycle notes, for `poller state`, that a cycle of res succeeded now: written
// with the next look (diagnostics up to lookEvery late, not a round trip a cycle).
func (p *Poller) noteCycle(res string) {
	if p.ops == nil {
		return
	}
	if p.between.notes == nil {
		p.between.notes = map[string]string{}
	}
	p.between.notes[OpsCyclePrefix+res] = time.Now().UTC().Format(time.RFC3339Nano)
}
