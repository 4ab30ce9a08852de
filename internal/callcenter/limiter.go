package callcenter

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"sync"
	"time"
)

// DefaultShare is the share of the account's rate limit a Limiter uses when
// LimiterConfig.Share is zero; the rest is left to other integrations.
const DefaultShare = 0.8

// LimiterConfig configures a Limiter. The zero value is usable.
type LimiterConfig struct {
	// Share is the fraction of the account's limit this service may use per
	// window, 0 < Share <= 1 (zero: DefaultShare). The rest, (1-Share)×Total, is
	// the reserve kept for other integrations of the account.
	Share float64
	// Window is the length of the server's rate window (zero: one minute, as in
	// production; simulators use shorter ones).
	Window time.Duration
	// InitialLimit is the account's limit assumed before a response reports
	// X-RateLimit-Total (zero: unknown, and requests go one at a time until a
	// response tells).
	InitialLimit int
}

// Limiter keeps the request budget of one account for every Client of that
// account; share one Limiter between them. It is safe for concurrent use.
//
// Algorithm. The account's limit L is learned from X-RateLimit-Total on every
// response. This service's budget is B = max(1, ⌊Share×L⌋) requests per Window and
// the reserve is L−B. A request is admitted (Acquire returns) only when all hold:
//
//  1. no pause is in force (Pause, or the retry wait after a 429);
//  2. L is known and no 429 is pending; otherwise (before a response reports
//     the limit, or after a 429 until a response carries rate headers again) at
//     most one request is in flight, a probe;
//  3. fewer than B requests were started in the last Window (a sliding log of
//     start times, so no Window-long interval, however aligned with the server's
//     windows, holds more than B of our requests);
//  4. the server's budget covers it while keeping the reserve: with R the last
//     X-RateLimit-Remaining (trusted for one Window after it arrived, or until the
//     server's window turns when a Remaining that rose showed when it does) and U the
//     requests it may not include (started after it, or in flight when it
//     arrived), R−U−1 ≥ L−B. When other integrations spend the account's budget,
//     R falls and this limiter slows down, never eating into the reserve.
//
// A token is reserved (the start time logged) before the request is sent. The
// response reconciles it: X-RateLimit-Used-CurrentRequest of 0 returns the token, n
// > 1 logs n−1 more; Ticket.Cancel returns it when the request was never sent. A
// 429 (Ticket.Throttled) counts R as 0 until its Retry-After has passed and puts
// the limiter back in probe mode. golang.org/x/time/rate is not used: a token bucket
// neither bounds every Window-long interval nor takes the server's Remaining into
// account.
type Limiter struct {
	share  float64
	window time.Duration
	clock  clock

	mu    sync.Mutex
	limit int // L; 0 while unknown
	// sends are the start times within the last window, sorted, as offsets from
	// base (the first one's): a third of a time.Time's 24 bytes, for a window of
	// up to a plan's requests that a fleet replica keeps for each account.
	sends       []time.Duration
	base        time.Time
	inflight    int
	probe       bool      // one request at a time until the server reports again
	obsLeft     int       // last X-RateLimit-Remaining
	obsSent     time.Time // when the request that reported obsLeft was admitted
	obsExpires  time.Time
	unaccounted int          // requests obsLeft may not include
	others      []othersSeen // other integrations' requests, as Remaining showed them
	turned      time.Time    // when the server's window last turned, at the latest (limiter_others.go)
	seenLeft    int          // the last Remaining a response carried (-1: none), for seeOthers
	seenSent    time.Time    // when its request was admitted
	firstSeen   time.Time    // when the request of the first Remaining was admitted
	pausedUntil time.Time
	changed     chan struct{} // closed and replaced on every state change
	stats       LimiterStats

	onAcquire func(time.Time) // test hook, called under mu
}

// NewLimiter returns a Limiter for one account. It fails on a Share outside
// (0, 1] or a negative Window or InitialLimit.
func NewLimiter(cfg LimiterConfig) (*Limiter, error) {
	var errs []error
	if cfg.Share == 0 {
		cfg.Share = DefaultShare
	}
	if !(cfg.Share > 0 && cfg.Share <= 1) {
		errs = append(errs, fmt.Errorf("share %v: must be within (0, 1]", cfg.Share))
	}
	if cfg.Window == 0 {
		cfg.Window = time.Minute
	}
	if cfg.Window < 0 {
		errs = append(errs, fmt.Errorf("window %v: must be positive", cfg.Window))
	}
	if cfg.InitialLimit < 0 {
		errs = append(errs, fmt.Errorf("initial limit %d: must not be negative", cfg.InitialLimit))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("new limiter: %w", err)
	}
	return &Limiter{
		share:    cfg.Share,
		window:   cfg.Window,
		clock:    wallClock{},
		limit:    cfg.InitialLimit,
		probe:    cfg.InitialLimit == 0,
		obsLeft:  -1,
		seenLeft: -1,
		changed:  make(chan struct{}),
	}, nil
}

// Ticket is one admitted request. End it exactly once with Done, Throttled or
// Cancel; later calls do nothing.
type Ticket struct {
	l     *Limiter
	at    time.Time
	ended bool
}

// Acquire waits until the budget covers one more request (see Limiter) and
// reserves it. It returns ctx's error, wrapped, when ctx is done first.
func (l *Limiter) Acquire(ctx context.Context) (*Ticket, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("wait for rate budget: %w", err)
	}
	start := l.clock.Now()
	waited := false
	for {
		l.mu.Lock()
		now := l.clock.Now()
		wait, ok := l.admit(now)
		if ok {
			t := l.take(now)
			if waited {
				l.stats.Waits++
				l.stats.WaitTime += now.Sub(start)
			}
			l.mu.Unlock()
			return t, nil
		}
		changed := l.changed
		l.mu.Unlock()
		waited = true
		if err := l.wait(ctx, wait, changed); err != nil {
			l.mu.Lock()
			l.stats.Waits++
			l.stats.WaitTime += l.clock.Now().Sub(start)
			l.mu.Unlock()
			return nil, fmt.Errorf("wait for rate budget: %w", err)
		}
	}
}

// wait blocks until d has passed (d == 0: no timer), the state changed or ctx is
// done.
func (l *Limiter) wait(ctx context.Context, d time.Duration, changed <-chan struct{}) error {
	var timer <-chan time.Time
	if d > 0 {
		ch, stop := l.clock.After(d)
		defer stop()
		timer = ch
	}
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-changed:
	case <-timer:
	}
	return nil
}

// admit reports whether a request may start at now and, if not, how long to wait
// at most before asking again (0: until the state changes). Called under mu.
func (l *Limiter) admit(now time.Time) (time.Duration, bool) {
	if now.Before(l.pausedUntil) {
		return l.pausedUntil.Sub(now), false
	}
	l.prune(now)
	if (l.limit == 0 || l.probe) && l.inflight > 0 {
		return 0, false
	}
	if b := l.budget(); l.limit > 0 && len(l.sends) >= b {
		return l.sent(len(l.sends) - b).Add(l.window).Sub(now), false
	}
	if now.Before(l.obsExpires) && l.obsLeft-l.unaccounted-1 < l.reserve() {
		return l.obsExpires.Sub(now), false
	}
	return 0, true
}

// take reserves a request starting at now. Called under mu.
func (l *Limiter) take(now time.Time) *Ticket {
	if l.base.IsZero() {
		l.base = now
	}
	l.sends = append(l.sends, l.since(now))
	l.inflight++
	l.unaccounted++
	l.stats.Acquired++
	if l.onAcquire != nil {
		l.onAcquire(now)
	}
	return &Ticket{l: l, at: now}
}

// budget is B, the requests per window of this limiter; 0 while L is unknown.
func (l *Limiter) budget() int {
	if l.limit == 0 {
		return 0
	}
	return max(1, int(math.Floor(l.share*float64(l.limit)+1e-9)))
}

// reserve is L−B, the part of the account's budget left to others.
func (l *Limiter) reserve() int { return max(0, l.limit-l.budget()) }

// prune drops start times that left the window (now-window, now].
func (l *Limiter) prune(now time.Time) {
	cut := l.since(now.Add(-l.window))
	i := sort.Search(len(l.sends), func(i int) bool { return l.sends[i] > cut })
	l.sends = append(l.sends[:0], l.sends[i:]...)
}

// sent is the start time of sends[i].
func (l *Limiter) sent(i int) time.Time { return l.base.Add(l.sends[i]) }

// since is t as an offset in sends.
func (l *Limiter) since(t time.Time) time.Duration { return t.Sub(l.base) }

// broadcast wakes every waiter. Called under mu.
func (l *Limiter) broadcast() {
	close(l.changed)
	l.changed = make(chan struct{})
}

// Pause stops admitting requests for d from now (a longer pause in force stays).
func (l *Limiter) Pause(d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if until := l.clock.Now().Add(d); until.After(l.pausedUntil) {
		l.pausedUntil = until
		l.stats.PausedUntil = until
	}
}
