package callcenter

import (
	"context"
	"time"
)

// clock is the time source of the Client and the Limiter. Production uses the wall
// clock; tests substitute a virtual clock so that waits are instant and counted.
type clock interface {
	Now() time.Time
	// After returns a channel that receives once d has passed, and a stop function.
	After(d time.Duration) (<-chan time.Time, func())
}

type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

func (wallClock) After(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTimer(d)
	return t.C, func() { t.Stop() }
}

// sleep waits for d on c, or until ctx is done (then it returns ctx's error).
func sleep(ctx context.Context, c clock, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	ch, stop := c.After(d)
	defer stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-ch:
		return nil
	}
}

// backoffTimer adapts a clock to backoff.Timer.
type backoffTimer struct {
	c    clock
	ch   <-chan time.Time
	stop func()
}

func (t *backoffTimer) Start(d time.Duration) {
	if t.stop != nil {
		t.stop()
	}
	t.ch, t.stop = t.c.After(d)
}

func (t *backoffTimer) Stop() {
	if t.stop != nil {
		t.stop()
	}
}

func (t *backoffTimer) C() <-chan time.Time { return t.ch }
