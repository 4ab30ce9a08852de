package callcenter

import (
	"sort"
	"time"
)

// othersSeen is one estimate of the requests other clients of the account made
// between two responses.
type othersSeen struct {
	at time.Time
	n  int
}

// seeOthers estimates, from a response's X-RateLimit-Remaining (left) to a
// request admitted at `at`, how many requests other integrations of the account
// made since the response heard before (within a window): what the server
// counted in between (the last Remaining less this one) less ours (started after
// that request, up to this one). A Remaining that rose means the server's window
// turned in between: then only what the new window counted (Total less left) is
// known, ours in the stretch at most among it, and the turn tells when the next
// one comes (nextTurn). Called under mu.
func (l *Limiter) seeOthers(at time.Time, left int, now time.Time) {
	if at.Before(l.seenSent) {
		return // an older request's answer, overtaken
	}
	prev, prevSent := l.seenLeft, l.seenSent
	l.seenLeft, l.seenSent = left, at
	if prev < 0 || at.Sub(prevSent) >= l.window {
		return
	}
	lo := sort.Search(len(l.sends), func(i int) bool { return l.sends[i].After(prevSent) })
	hi := sort.Search(len(l.sends), func(i int) bool { return l.sends[i].After(at) })
	counted := prev - left
	if left > prev {
		l.turned = at // the turn came at `at` at the latest
		counted = l.limit - left
	}
	if n := counted - (hi - lo); n > 0 {
		l.others = append(l.others, othersSeen{at: now, n: n})
	}
}

// nextTurn is when the server's rate window turns next after now, as far as a
// turn was seen (a Remaining that rose): one Window after now when none was, or
// when the server's windows do not turn all at once.
func (l *Limiter) nextTurn(now time.Time) time.Time {
	if l.turned.IsZero() || l.turned.After(now) {
		return now.Add(l.window)
	}
	k := now.Sub(l.turned)/l.window + 1
	return l.turned.Add(k * l.window)
}

// othersInWindow is the requests other integrations made in the last window, as
// far as the server's Remaining showed them. Called under mu.
func (l *Limiter) othersInWindow(now time.Time) int {
	cut := now.Add(-l.window)
	i := sort.Search(len(l.others), func(i int) bool { return l.others[i].at.After(cut) })
	l.others = append(l.others[:0], l.others[i:]...)
	n := 0
	for _, o := range l.others {
		n += o.n
	}
	return n
}
