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
	if l.firstSeen.IsZero() {
		l.firstSeen = at
	}
	if prev < 0 || at.Sub(prevSent) >= l.window {
		return
	}
	prevOff, atOff := l.since(prevSent), l.since(at)
	lo := sort.Search(len(l.sends), func(i int) bool { return l.sends[i] > prevOff })
	hi := sort.Search(len(l.sends), func(i int) bool { return l.sends[i] > atOff })
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
// turn was seen (a Remaining that rose). Before the first turn: one Window after
// the first Remaining at the latest, the server's window then having begun
// before it; one Window after now past that (a server whose windows do not turn
// all at once).
func (l *Limiter) nextTurn(now time.Time) time.Time {
	if l.turned.IsZero() || l.turned.After(now) {
		if first := l.firstSeen.Add(l.window); !l.firstSeen.IsZero() && first.After(now) {
			return first
		}
		return now.Add(l.window)
	}
	k := now.Sub(l.turned)/l.window + 1
	return l.turned.Add(k * l.window)
}

// minOthersSpan is the shortest stretch othersInWindow extrapolates from.
const minOthersSpan = 10 * time.Second

// othersInWindow is the requests other integrations made in the last window, as
// far as the server's Remaining showed them; in the first window after the first
// Remaining, what was seen so far at the same pace over a whole window, so that
// a budget planned from it does not start too high. Called under mu.
func (l *Limiter) othersInWindow(now time.Time) int {
	cut := now.Add(-l.window)
	i := sort.Search(len(l.others), func(i int) bool { return l.others[i].at.After(cut) })
	l.others = append(l.others[:0], l.others[i:]...)
	n := 0
	for _, o := range l.others {
		n += o.n
	}
	if span := now.Sub(l.firstSeen); !l.firstSeen.IsZero() && span < l.window {
		n = int(float64(n) * float64(l.window) / float64(max(span, minOthersSpan)))
	}
	return n
}
