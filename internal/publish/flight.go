package publish

import (
	"context"
	"fmt"
	"time"

	"github.com/callbus/callbus/internal/event"
	"go.opentelemetry.io/otel/codes"
)

// flight is where the relay stands in the outbox: what it has sent and not yet
// seen acknowledged, and what it has seen acknowledged and not yet trimmed.
type flight struct {
	next      string     // the last entry sent: the next read starts after it ("" the outbox's head)
	queue     []inflight // sent, awaiting acknowledgement, in outbox order
	acked     string     // the last entry acknowledged ("" none since the last trim)
	untrimmed int        // entries acknowledged since the last trim
	// heal: the next entries come from the acknowledged ones kept (the stream
	// lost some, see reconcile), then from the outbox.
	heal bool
}

// trimEvery is how many acknowledged entries the relay lets gather before it
// trims them in one XTRIM; an idle or failing relay trims what it has at once.
const trimEvery = 1024

// step moves fl along and returns how many entries it sent or saw acknowledged (0:
// nothing to do). While fewer than InFlight entries await their acknowledgement,
// it reads the next batch, confirms the lease and sends the batch, then takes the
// acknowledgements already in; otherwise it waits for the oldest ones. An outbox
// with nothing more to read has what is in flight waited for and trimmed.
//
// On any failure it waits for what is still in flight (so that nothing lands after
// what is published next), trims the acknowledged prefix, starts fl over from the
// outbox's head and returns the error. When ctx ended, fl is left as it stands:
// what is in flight awaits its acknowledgement there, and a Drain goes on from it
// (Relay.resumed).
func (r *Relay) step(ctx context.Context, fl *flight) (int, error) {
	n, err := r.advance(ctx, fl)
	if err != nil && ctx.Err() == nil {
		r.restart(ctx, fl)
	}
	return n, err
}

// restart waits for what is in flight, trims the acknowledged prefix and starts
// fl over, for the reconcile that follows.
func (r *Relay) restart(ctx context.Context, fl *flight) {
	r.settle(ctx, fl)
	if terr := r.trim(ctx, fl, true); terr != nil && ctx.Err() == nil {
		r.log.Warn().Err(terr).Msg("relay: trim after a failure failed; the next reconcile trims")
	}
	*fl = flight{}
}

// advance is step without the clean-up after a failure.
func (r *Relay) advance(ctx context.Context, fl *flight) (int, error) {
	room := r.cfg.InFlight - len(fl.queue)
	if room < r.cfg.Batch {
		n, err := r.acks(ctx, fl, max(len(fl.queue)-r.cfg.Batch, 0)) // make room for a batch
		if err == nil {
			err = r.trim(ctx, fl, false)
		}
		return n, err
	}
	sent, err := r.sendBatch(ctx, fl, room)
	if err != nil {
		return sent, err
	}
	keep := len(fl.queue) // take what is in, wait for nothing
	if sent == 0 {
		keep = 0 // nothing more to send: wait for everything
	}
	n, err := r.acks(ctx, fl, keep)
	if err == nil {
		err = r.trim(ctx, fl, len(fl.queue) == 0)
	}
	return sent + n, err
}

// sendBatch reads up to a batch of entries after fl.next (at most room), confirms
// the lease and sends them; it returns how many it sent. The lease is confirmed
// only once there is something to send: most looks of an idle account's relay
// find nothing, and a confirmation each was a Redis round trip and a goroutine
// for nothing (a sixth of the Redis writes of a 2,000-account replica).
func (r *Relay) sendBatch(ctx context.Context, fl *flight, room int) (int, error) {
	recs, err := r.read(ctx, fl, min(r.cfg.Batch, room))
	if err != nil {
		return 0, fmt.Errorf("read outbox: %w", err)
	}
	if len(recs) == 0 {
		return 0, nil
	}
	until, err := r.confirm(ctx)
	if err != nil {
		return 0, fmt.Errorf("confirm the lease: %w", err)
	}
	before := len(fl.queue)
	err = r.send(ctx, fl, recs, until)
	return len(fl.queue) - before, err
}

// read reads the next entries of fl: acknowledged ones kept while it heals,
// then the outbox's.
func (r *Relay) read(ctx context.Context, fl *flight, n int) ([]event.Committed, error) {
	if fl.heal {
		recs, err := r.outbox.ReadAcked(ctx, fl.next, n)
		if err != nil || len(recs) > 0 {
			return recs, err
		}
		fl.heal = false // every entry after fl.next is in the outbox
	}
	return r.outbox.ReadOutbox(ctx, fl.next, n)
}

// confirm confirms the lease (when the relay has a fence) and returns the time
// until which the relay may send (zero: no fence). The time is taken before
// asking: the answer may come late.
func (r *Relay) confirm(ctx context.Context) (time.Time, error) {
	if r.fence == nil {
		return time.Time{}, nil
	}
	start := time.Now()
	ttl, err := r.fence(ctx)
	if err != nil {
		return time.Time{}, err
	}
	return start.Add(time.Duration(float64(ttl) * fenceShare)), nil
}

// acks takes the acknowledgements of the oldest entries in flight, in order: it
// waits for them while more than keep are in flight, then takes those already in.
// It returns how many it took.
func (r *Relay) acks(ctx context.Context, fl *flight, keep int) (int, error) {
	defer r.observe()
	n := 0
	// The acknowledged prefix leaves by moving the rest to the front of the same
	// array: slicing it off would make the next appends reallocate the queue
	// (thousands of entries) again and again.
	defer func() {
		k := copy(fl.queue, fl.queue[n:])
		clear(fl.queue[k:]) // the backing array keeps no record
		fl.queue = fl.queue[:k]
	}()
	for n < len(fl.queue) {
		in := &fl.queue[n]
		ack, err, ok := r.ack(ctx, in.seq, len(fl.queue)-n > keep)
		if !ok {
			break // not in yet, and not waited for
		}
		if err == nil && ack.Duplicate {
			err = r.stillStored(ctx, in.rec, ack.Sequence)
		}
		if err != nil {
			in.span.SetStatus(codes.Error, err.Error())
			return n, fmt.Errorf("publish %s (%s): %w", in.rec.ID, in.rec.Subject, err)
		}
		r.acked(ack, in)
		fl.acked, fl.untrimmed = in.rec.StreamID, fl.untrimmed+1
		n++
	}
	return n, nil
}

// trim removes the acknowledged entries from the outbox, once trimEvery of them
// gathered, or now when force.
func (r *Relay) trim(ctx context.Context, fl *flight, force bool) error {
	if fl.untrimmed == 0 || (!force && fl.untrimmed < trimEvery) {
		return nil
	}
	if err := r.outbox.TrimOutbox(ctx, fl.acked); err != nil {
		// Published but not trimmed: the next read starts after them anyway, and
		// the next reconcile finds them in the stream.
		return fmt.Errorf("trim outbox to %s: %w", fl.acked, err)
	}
	fl.acked, fl.untrimmed = "", 0
	return nil
}

// settle waits for publishes still in flight after a failure or a reconnection,
// so none of them lands after the republish that follows, and ends their spans.
// It waits AckWait in all, not for each: after a reconnection the answers to a
// whole window of publishes can be lost, and a wait of AckWait each (up to 1,024
// of them) stalled the relay, silently, for hours.
func (r *Relay) settle(ctx context.Context, fl *flight) {
	sctx, cancel := context.WithTimeout(ctx, r.cfg.AckWait)
	defer cancel()
	for i := range fl.queue {
		if sctx.Err() == nil {
			_, _, _ = r.ack(sctx, fl.queue[i].seq, true)
		}
	}
	r.abandon(fl)
}

// abandon ends the spans of what is still in flight and forgets it.
func (r *Relay) abandon(fl *flight) {
	for _, in := range fl.queue {
		if in.span != nil {
			in.span.End()
		}
	}
	fl.queue = nil
	r.replies.reset() // replies still to come are dropped
}
