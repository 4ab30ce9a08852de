package sim

import (
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// unlimitedTotal is X-RateLimit-Total for plan 0 (unlimited).
const unlimitedTotal = 1_000_000

// limiter is the account-wide fixed-window rate limit. Windows are aligned on the
// limiter's creation: [origin + k×window, origin + (k+1)×window). Every request
// counts, whether it succeeds, fails or is refused. Safe for concurrent use.
type limiter struct {
	mu       sync.Mutex
	clock    Clock
	plan     int
	window   time.Duration
	origin   time.Time
	winStart time.Time
	used     int

	burstEvery, burstLen time.Duration
}

func newLimiter(cfg Config, clock Clock) *limiter {
	now := clock.Now()
	return &limiter{clock: clock, plan: cfg.Plan, window: cfg.RateWindow, origin: now, winStart: now,
		burstEvery: cfg.Burst429Every, burstLen: cfg.Burst429Length}
}

// quota is one request's rate-limit outcome.
type quota struct {
	total, remaining int
	limited          bool
	burst            bool          // refused by a 429 burst rather than the budget
	retryIn          time.Duration // until the window (or burst) ends
}

// take counts a request and reports whether it is over the plan or in a burst.
func (l *limiter) take() quota {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.clock.Now()
	if now.Sub(l.winStart) >= l.window || now.Before(l.winStart) {
		k := now.Sub(l.origin) / l.window
		l.winStart = l.origin.Add(k * l.window)
		l.used = 0
	}
	l.used++
	total := l.plan
	if total == 0 {
		total = unlimitedTotal
	}
	q := quota{total: total, remaining: max(total-l.used, 0), retryIn: l.winStart.Add(l.window).Sub(now)}
	if l.plan > 0 && l.used > l.plan {
		q.limited = true
	}
	if l.burstEvery > 0 {
		since := now.Sub(l.origin)
		if k := since / l.burstEvery; k >= 1 {
			if in := since - k*l.burstEvery; in < l.burstLen {
				q.limited, q.burst = true, true
				q.retryIn = l.burstLen - in
			}
		}
	}
	return q
}

// setHeaders writes the three rate-limit headers.
func (q quota) setHeaders(h http.Header) {
	h.Set("X-RateLimit-Total", strconv.Itoa(q.total))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(q.remaining))
	h.Set("X-RateLimit-Used-CurrentRequest", "1")
}

// retryAfterSeconds is Retry-After for q: whole seconds, at least 1.
func (q quota) retryAfterSeconds() string {
	return strconv.Itoa(max(1, int(math.Ceil(q.retryIn.Seconds()))))
}
