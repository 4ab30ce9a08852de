package publish

import (
	"context"
	"time"

	"github.com/cenkalti/backoff/v4"
)

// A replica of a fleet runs thousands of relays, most of them idle most of the
// time: a relay parked in a goroutine of its own between its looks at the
// outbox kept that goroutine's stack (grown to its deepest call: Redis, NATS,
// the encoder) for nothing. A run therefore waits between its turns on a timer
// and on Wake, with no goroutine: the timer, Wake or the end of its context
// starts the next turn in a goroutine that lasts as long as the turn.

// relayRun is one Start's state, handed from one turn's goroutine to the next
// under Relay.mu (turns parks it, proceed and Wake take it): never two at once.
type relayRun struct {
	r          *Relay
	ctx        context.Context
	done       func()
	bo         *backoff.ExponentialBackOff
	reconciled bool
	fl         *flight
	wakeable   bool        // the wait is an idle one, which a Wake ends (not a backoff)
	timer      *time.Timer // the wait's, made at the first one
	stopAfter  func() bool // stops the proceed at ctx's end
}

// Start relays as Run does, without blocking: the relay's work goes on in
// goroutines of its own while there is some, none while it waits. Once ctx
// ended and the relay stopped, done is called (once): a Drain may follow then.
func (r *Relay) Start(ctx context.Context, done func()) {
	bo := backoff.NewExponentialBackOff()
	bo.InitialInterval = 100 * time.Millisecond
	bo.MaxInterval = 5 * time.Second
	bo.MaxElapsedTime = 0 // never give up: the outbox holds the events meanwhile
	if r.resume != nil {  // a Run's that no Drain took
		r.abandon(r.resume)
		r.resume = nil
	}
	rn := &relayRun{r: r, ctx: ctx, done: done, bo: bo, fl: &flight{}}
	rn.stopAfter = context.AfterFunc(ctx, rn.proceed)
	go rn.turns()
}

// Wake tells the relay that new entries were committed: a run waiting idle
// starts its next turn at once; one at work takes another turn before it waits.
func (r *Relay) Wake() {
	r.mu.Lock()
	rn := r.waiting
	if rn != nil && rn.wakeable {
		r.waiting = nil
	} else {
		r.woken, rn = true, nil
	}
	r.mu.Unlock()
	if rn != nil {
		rn.timer.Stop() // when it fired meanwhile, its proceed finds nothing waiting
		go rn.turns()
	}
}

// proceed starts the next turn of rn when it is waiting (its timer fired, or its
// context ended), in the caller's goroutine.
func (rn *relayRun) proceed() {
	r := rn.r
	r.mu.Lock()
	if r.waiting != rn {
		r.mu.Unlock()
		return
	}
	r.waiting = nil
	r.mu.Unlock()
	rn.turns()
}

// turns runs turns until the relay must wait (it parks) or ctx ended (it
// finishes).
func (rn *relayRun) turns() {
	r := rn.r
	for {
		if rn.ctx.Err() != nil {
			rn.finish()
			return
		}
		d, wakeable := rn.turn()
		if d == 0 {
			continue
		}
		r.mu.Lock()
		// Under mu: a Wake or the context's end from now on finds rn waiting.
		if rn.ctx.Err() != nil || (wakeable && r.woken) {
			r.woken = r.woken && !wakeable
			r.mu.Unlock()
			continue
		}
		r.waiting, rn.wakeable = rn, wakeable
		if rn.timer == nil {
			rn.timer = time.AfterFunc(d, rn.proceed)
		} else {
			rn.timer.Reset(d)
		}
		r.mu.Unlock()
		return
	}
}

// turn is one step of the relay (see Run): it returns how long to wait before
// the next (0: none), and whether a Wake ends that wait.
func (rn *relayRun) turn() (wait time.Duration, wakeable bool) {
	r, ctx := rn.r, rn.ctx
	var err error
	if rn.reconciled && r.reconnected() {
		r.log.Info().Msg("relay: NATS connection came back; checking the stream for acknowledged events it lost")
		r.restart(ctx, rn.fl)
		rn.reconciled = false
	}
	if !rn.reconciled {
		err = r.reconcile(ctx)
		rn.reconciled = err == nil
		*rn.fl = r.start
	}
	var n int
	if err == nil {
		n, err = r.step(ctx, rn.fl)
	}
	if err != nil {
		if ctx.Err() != nil {
			return 0, false // fl as step left it: see resumed
		}
		// The stream may hold what was not acknowledged.
		rn.reconciled = false
		r.Stats.Errors.Add(1)
		d := rn.bo.NextBackOff()
		r.log.Warn().Err(err).Dur("retry_in_ms", d).Msg("relay: publish failed; events stay in the outbox")
		return d, false
	}
	rn.bo.Reset()
	if n == 0 {
		r.shed(rn.fl)
		return r.cfg.Idle, true
	}
	return 0, false
}

// finish ends the run once ctx ended: it leaves where Drain goes on (see
// resumed) and calls done.
func (rn *relayRun) finish() {
	r := rn.r
	rn.stopAfter()
	r.mu.Lock()
	if r.waiting == rn {
		r.waiting = nil
	}
	if rn.timer != nil {
		rn.timer.Stop()
	}
	r.mu.Unlock()
	if rn.reconciled {
		r.resume = rn.fl // where Drain goes on (see resumed)
	} else {
		r.abandon(rn.fl)
	}
	rn.done()
}
