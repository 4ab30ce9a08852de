package poll

import "time"

// costCycles is how many of a resource's last cycles its cost is the mean of: a
// retry (one request more in one cycle) moves the cost by 1/costCycles, the
// share of the budget it really took, where the weight of 0.3 the last cycle
// had before took 30% of a request per cycle from the resources shortened last
// (users) for the next several cycles; a lasting change (a window needing one
// more page) is followed within as many cycles.
const costCycles = 16

// failedRetry bounds the wait before a failed cycle runs again (its interval,
// when shorter). The client has already retried the request itself: a cycle
// fails after minutes of 5xx, or on a permanent error.
const failedRetry = 5 * time.Second

// schedule is when each resource is due and what its cycles cost, for Run. A
// resource is due its effective interval after its last turn, at the interval
// in force now: when the intervals change (after every cycle), every pending
// wait follows at once, rather than the wait set when the resource last ran (a
// cost measured high for a moment then kept users waiting a whole stretched
// interval after the intervals had recovered). Its last turn is when its last
// cycle was due, not when it began: a cycle that waited for another one to end
// does not push every later turn of its resource back (users ran 5% less often
// than planned that way), and one that began over an interval late counts from
// its start, so nothing runs twice to catch up. How late each turn begins sets
// the pace (pace.go). Not safe for concurrent use.
type schedule struct {
	order []string             // by priority, the tie-break of due
	turn  map[string]time.Time // the last cycle's turn (see above)
	retry map[string]time.Time // after a failed cycle; zero: none
	eff   map[string]time.Duration
	costs map[string]*costLog
	// moved is when a shorter interval made a resource due at once that was not
	// due yet: its lateness counts from then (see pace).
	moved map[string]time.Time
	pace  pace
}

func newSchedule(order []string) *schedule {
	s := &schedule{order: order, turn: map[string]time.Time{}, retry: map[string]time.Time{},
		eff: map[string]time.Duration{}, costs: map[string]*costLog{}, moved: map[string]time.Time{}, pace: pace{spare: 1}}
	for _, r := range order {
		s.costs[r] = &costLog{}
	}
	return s
}

// ran records a cycle of res that began at start and spent used requests
// (retries included).
func (s *schedule) ran(res string, start time.Time, used int) {
	due, retried := s.next(res), !s.retry[res].IsZero()
	planned := due
	if m, ok := s.moved[res]; ok && m.After(due) {
		planned = m
	}
	delete(s.moved, res)
	s.pace.turn(planned, start, s.eff[res])
	if retried || due.IsZero() || due.After(start) || start.Sub(due) >= s.eff[res] {
		due = start
	}
	s.turn[res] = due
	delete(s.retry, res)
	s.costs[res].add(max(used, 1))
}

// failed makes res due again soon after a failed cycle that ended at now.
func (s *schedule) failed(res string, now time.Time) {
	s.retry[res] = now.Add(min(s.eff[res], failedRetry))
}

// setIntervals sets the effective intervals (Allocate's) at now.
func (s *schedule) setIntervals(eff map[string]time.Duration, now time.Time) {
	for r, d := range eff {
		if old, ok := s.eff[r]; ok && d < old && !s.turn[r].IsZero() && s.turn[r].Add(d).Before(now) {
			s.moved[r] = now
		}
		s.eff[r] = d
	}
}

// cost is the requests per cycle of each resource, the mean of its last
// costCycles cycles (1 before the first).
func (s *schedule) cost() map[string]float64 {
	out := make(map[string]float64, len(s.costs))
	for r, c := range s.costs {
		out[r] = c.mean()
	}
	return out
}

// next is when res is due.
func (s *schedule) next(res string) time.Time {
	if t, ok := s.retry[res]; ok {
		return t
	}
	if s.turn[res].IsZero() {
		return time.Time{} // never ran: due now
	}
	return s.turn[res].Add(s.eff[res])
}

// due returns the resource whose turn came first at now (earliest deadline
// first, so a busy high-priority resource cannot starve the others; priority
// breaks ties and acts through the intervals), or how long until the next one
// is due.
func (s *schedule) due(now time.Time) (string, time.Duration) {
	best, bestAt, wait := "", time.Time{}, time.Hour
	for _, r := range s.order {
		at := s.next(r)
		if at.After(now) {
			wait = min(wait, at.Sub(now))
			continue
		}
		if best == "" || at.Before(bestAt) {
			best, bestAt = r, at
		}
	}
	if best != "" {
		return best, 0
	}
	return "", wait
}

// costLog holds the requests of a resource's last costCycles cycles.
type costLog struct {
	n    [costCycles]int
	i, k int // next slot, slots filled
}

func (c *costLog) add(n int) {
	c.n[c.i] = n
	c.i = (c.i + 1) % costCycles
	c.k = min(c.k+1, costCycles)
}

func (c *costLog) mean() float64 {
	if c.k == 0 {
		return 1
	}
	sum := 0
	for _, n := range c.n[:c.k] {
		sum += n
	}
	return float64(sum) / float64(c.k)
}
