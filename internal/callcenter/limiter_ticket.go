package callcenter

import (
	"sort"
	"time"
)

// maxUsedPerRequest bounds the weight a response can give its request.
const maxUsedPerRequest = 100

// Done ends the ticket with the rate state of the request's response (rs may be
// unknown, e.g. after a network error: the token then stays spent).
func (t *Ticket) Done(rs RateState) {
	l := t.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if !t.end() {
		return
	}
	l.reconcile(t.at, rs.Used)
	if rs.Total > 0 {
		l.limit = rs.Total
		l.probe = false
	}
	// A response to an older request, arriving late, says less than the one
	// already heard: it must not raise what the server has left.
	if rs.Remaining >= 0 {
		l.seeOthers(t.at, rs.Remaining, l.clock.Now())
	}
	if rs.Remaining >= 0 && !t.at.Before(l.obsSent) {
		l.obsLeft, l.obsSent = rs.Remaining, t.at
		// Trusted until the server's window turns, as far as a turn was seen:
		// held back near the reserve, requests resume with the new window.
		l.obsExpires = l.nextTurn(l.clock.Now())
		l.unaccounted = l.inflight
		l.probe = false
	}
	l.broadcast()
}

// Throttled ends the ticket of a request answered 429: the server's budget counts as
// spent until retryAfter has passed (0: unknown), and the limiter goes back to one
// request at a time until a response reports the budget again.
func (t *Ticket) Throttled(rs RateState, retryAfter time.Duration) {
	l := t.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if !t.end() {
		return
	}
	l.reconcile(t.at, rs.Used)
	if rs.Total > 0 {
		l.limit = rs.Total
	}
	now := l.clock.Now()
	l.obsLeft = 0
	l.obsExpires = now.Add(retryAfter)
	l.unaccounted = l.inflight
	l.probe = true
	l.stats.Throttled++
	l.broadcast()
}

// Cancel ends the ticket of a request that was never sent, returning its token.
func (t *Ticket) Cancel() {
	l := t.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if !t.end() {
		return
	}
	l.reconcile(t.at, 0)
	l.broadcast()
}

// end marks the ticket ended; false when it already was. Called under mu.
func (t *Ticket) end() bool {
	if t.ended {
		return false
	}
	t.ended = true
	t.l.inflight--
	return true
}

// reconcile corrects the weight of the request started at `at` to used tokens
// (used < 0: unknown, keep 1). Called under mu.
func (l *Limiter) reconcile(at time.Time, used int) {
	if used == 1 || used < 0 {
		return
	}
	off := l.since(at)
	i := sort.Search(len(l.sends), func(i int) bool { return l.sends[i] >= off })
	if used == 0 {
		if i < len(l.sends) && l.sends[i] == off {
			l.sends = append(l.sends[:i], l.sends[i+1:]...)
		}
		return
	}
	if at.Before(l.clock.Now().Add(-l.window)) {
		return // already out of the window
	}
	extra := make([]time.Duration, min(used, maxUsedPerRequest)-1)
	for k := range extra {
		extra[k] = off
	}
	l.sends = append(l.sends[:i], append(extra, l.sends[i:]...)...)
}

// LimiterStats is a snapshot of a Limiter, for metrics.
type LimiterStats struct {
	// Limit is the account's learned limit per window (0 until known), Budget this
	// limiter's share of it and Reserve what is left to others.
	Limit, Budget, Reserve int
	// UsedInWindow is the requests started in the last window; InFlight those not
	// yet answered.
	UsedInWindow, InFlight int
	// ServerRemaining is the last X-RateLimit-Remaining while still trusted; -1
	// when unknown or stale.
	ServerRemaining int
	// Others estimates the requests other integrations of the account made in
	// the last window, from how X-RateLimit-Remaining fell between two of our
	// responses beyond our own requests (limiter_others.go). This limiter keeps
	// the reserve free whoever spends the rest: it admits about Budget − Others.
	Others int
	// Acquired counts admitted requests, Waits those that had to wait (or gave up
	// waiting), WaitTime their total wait, Throttled the 429s seen.
	Acquired, Waits, Throttled uint64
	WaitTime                   time.Duration
	// PausedUntil is the end of the latest pause (zero if none).
	PausedUntil time.Time
	// Probing is true while requests go one at a time (limit unknown, or after a
	// 429).
	Probing bool
}

// Stats returns a snapshot of the limiter's state and counters.
func (l *Limiter) Stats() LimiterStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.clock.Now()
	l.prune(now)
	s := l.stats
	s.Limit, s.Budget, s.Reserve = l.limit, l.budget(), l.reserve()
	s.UsedInWindow, s.InFlight = len(l.sends), l.inflight
	s.ServerRemaining = -1
	if now.Before(l.obsExpires) {
		s.ServerRemaining = l.obsLeft
	}
	s.Probing = l.probe || l.limit == 0
	s.Others = l.othersInWindow(now)
	return s
}
