package poll

import "time"

// pace decides how much of the budget beyond the targets an account's intervals
// spend (Allocate's second round, toward the floor): all of it while the
// account's turns begin on time, less as they begin late. A turn begins late when
// the cycles before it took longer than planned: a replica short of CPU (a fleet
// of more accounts than its cores poll at their floors), a Redis or an API that
// slows down, a backlog's long calls cycles. Shrinking the intervals then only
// queues more cycles behind the late ones: every event waits longer, targets
// included, for requests that bought nothing (2,000 accounts on one 2-core
// replica polled at their floors made `call.created` 1.25 × its interval at p99,
// at their targets 1.14 × with less than half the CPU). Each account paces
// itself from its own turns, so a slow API slows only its own account, and a
// replica that falls behind eases off on every account at once.
type pace struct {
	// spare is the part of the way from each target to the floor the intervals
	// may shrink (1: to the floor, 0: not below the target).
	spare float64
	// late is the mean lateness of the last turns, each as a part of its
	// interval (0: on time, 1: a whole interval or more), weighted to the last
	// (paceWeight).
	late float64
}

// The pace's controller: lateness over paceLate cuts the spare by paceBackOff
// at every turn (a replica that fell behind is back at its targets within ten
// turns, seconds at the floor), under paceOnTime it grows back by paceRecover
// (at 2 s intervals, from the targets to the floor in about 40 seconds), and
// between the two it holds. Where it holds is the lateness a replica short of
// CPU settles at, and that lateness comes on top of every interval in the
// detection delays: an event's p99 is about its interval × (1 + the lateness)
// plus the cycle's own time, so a tenth, not more. A quarter (tried) left
// 2,000 accounts on a slower 2-core replica at 1.37 × the calls interval for
// `call.created` at p99, against 1.09 and 1.25 at a tenth, for less CPU. An
// account alone behind an API slow to answer, whose turns wait for each
// other's cycles, then leaves its floor sooner: its cycles queue anyway.
const (
	paceWeight  = 0.2
	paceLate    = 0.10
	paceOnTime  = 0.05
	paceBackOff = 0.7
	paceRecover = 0.05
	// paceMin: a spare below it is none (a multiplicative cut never reaches 0).
	paceMin = 0.02
)

// turn records a turn that was due at due (zero: its first, never late) and
// began at start, its resource's interval being every.
func (p *pace) turn(due, start time.Time, every time.Duration) {
	r := 0.0
	if !due.IsZero() && start.After(due) && every > 0 {
		r = min(1, float64(start.Sub(due))/float64(every))
	}
	p.late += paceWeight * (r - p.late)
	switch {
	case p.late > paceLate:
		if p.spare *= paceBackOff; p.spare < paceMin {
			p.spare = 0
		}
	case p.late < paceOnTime:
		p.spare = min(1, p.spare+paceRecover)
	}
}

// floor is the floor a resource of target shrinks toward at this pace, the
// setting's floor being floor (0 or not below target: none).
func (p *pace) floor(target, floor time.Duration) time.Duration {
	if floor <= 0 || floor >= target {
		return floor
	}
	return target - time.Duration(p.spare*float64(target-floor))
}
