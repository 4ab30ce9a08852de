package sim

import (
	"sync"
	"time"
)

// Clock gives the current simulated time. Implementations must be safe for
// concurrent use.
type Clock interface {
	Now() time.Time
}

// advancer is a Clock that Sim.Advance can move forward.
type advancer interface {
	Clock
	Advance(d time.Duration)
}

// ManualClock is a Clock that only moves when told to; tests use it so the world
// depends on nothing but the seed, the config and the Advance calls. Safe for
// concurrent use.
type ManualClock struct {
	mu sync.Mutex
	t  time.Time
}

// NewManualClock returns a clock standing at t.
func NewManualClock(t time.Time) *ManualClock { return &ManualClock{t: t} }

// Now returns the clock's time.
func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward by d (negative d is ignored: time never goes back).
func (c *ManualClock) Advance(d time.Duration) {
	if d <= 0 {
		return
	}
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// ScaledClock runs at Speed simulated seconds per real second from Start, measured
// from its creation: Now = Start + Speed × (real elapsed) + skipped, where skipped is
// what Advance added. Safe for concurrent use.
type ScaledClock struct {
	start time.Time
	speed float64
	real0 time.Time // monotonic reading at creation
	now   func() time.Time

	mu      sync.Mutex
	skipped time.Duration
}

// NewScaledClock returns a clock at start that runs speed times faster than the
// wall clock.
func NewScaledClock(start time.Time, speed float64) *ScaledClock {
	return &ScaledClock{start: start, speed: speed, real0: time.Now(), now: time.Now}
}

// Now returns the simulated time.
func (c *ScaledClock) Now() time.Time {
	elapsed := time.Duration(float64(c.now().Sub(c.real0)) * c.speed)
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.start.Add(elapsed + c.skipped)
}

// Advance jumps the clock forward by d on top of its running.
func (c *ScaledClock) Advance(d time.Duration) {
	if d <= 0 {
		return
	}
	c.mu.Lock()
	c.skipped += d
	c.mu.Unlock()
}

// wallClock is the real clock, for rate limits by default.
type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

// sec is a simulated instant in whole Unix seconds. The world keeps every time at
// second resolution (the wire format's), which also keeps records compact.
type sec int64

// toSec truncates t to its second.
func toSec(t time.Time) sec { return sec(t.Unix()) }

// Time converts s back to a UTC time.Time.
func (s sec) Time() time.Time { return time.Unix(int64(s), 0).UTC() }
