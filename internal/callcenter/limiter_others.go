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
// made since the response heard before: what the server counted in between
// (the last Remaining less this one) less ours (started after that request, up to
// this one). A Remaining that rose means the server's window turned in between:
// that stretch tells nothing. Called under mu, before the observation is kept.
func (l *Limiter) seeOthers(at time.Time, left int, now time.Time) {
	if l.obsLeft < 0 || !now.Before(l.obsExpires) || left > l.obsLeft || at.Before(l.obsSent) {
		return
	}
	lo := sort.Search(len(l.sends), func(i int) bool { return l.sends[i].After(l.obsSent) })
	hi := sort.Search(len(l.sends), func(i int) bool { return l.sends[i].After(at) })
	if n := (l.obsLeft - left) - (hi - lo); n > 0 {
		l.others = append(l.others, othersSeen{at: now, n: n})
	}
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
