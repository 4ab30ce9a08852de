package poll

import (
	"cmp"
	"slices"
	"time"
)

// Demand is one resource's claim on the request budget.
type Demand struct {
	Name     string
	Target   time.Duration // the interval the operator asked for
	Priority int           // higher runs closer to its target when the budget is short
	Cost     float64       // requests one run takes (measured; at least 1)
	// Floor is the shortest interval the resource may shrink to when the budget
	// has room beyond every target (0, or not below Target: never below Target).
	Floor time.Duration
}

// MaxStretch bounds how far a resource's interval is stretched when the budget is
// short, so that a low-priority resource is late but never starved.
const MaxStretch = 20

// Allocate returns the effective interval of every resource so that together they
// spend at most budget requests per window. Every resource first gets the minimum it
// needs at MaxStretch × its target; what is left goes to resources in priority order
// (highest first), each up to its target rate; the next one gets the remainder and
// the ones after it stay at MaxStretch. When every target is met, what is still
// left buys freshness, again in priority order: each resource's interval shrinks
// from its target toward its floor, the next one getting the remainder. When the
// budget cannot cover even the minimum, every interval is scaled alike; with no
// budget at all (limit not yet known) every interval is MaxStretch × its target.
// The result is deterministic.
func Allocate(budget float64, window time.Duration, ds []Demand) map[string]time.Duration {
	out := make(map[string]time.Duration, len(ds))
	if len(ds) == 0 {
		return out
	}
	rate := func(d Demand, every time.Duration) float64 { // requests per window
		return max(d.Cost, 1) * float64(window) / float64(every)
	}
	var floor float64
	for _, d := range ds {
		floor += rate(d, d.Target*MaxStretch)
	}
	if budget <= 0 { // no budget known yet: the limiter holds requests back anyway
		for _, d := range ds {
			out[d.Name] = d.Target * MaxStretch
		}
		return out
	}
	if floor >= budget {
		scale := MaxStretch * floor / budget
		for _, d := range ds {
			out[d.Name] = time.Duration(float64(d.Target) * scale)
		}
		return out
	}
	order := slices.Clone(ds)
	slices.SortStableFunc(order, func(a, b Demand) int {
		if c := cmp.Compare(b.Priority, a.Priority); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
	left := budget - floor
	for _, d := range order { // up to every target
		out[d.Name], left = give(d, d.Target*MaxStretch, d.Target, left, window)
	}
	for _, d := range order { // then toward every floor
		if d.Floor > 0 && d.Floor < d.Target && out[d.Name] == d.Target {
			out[d.Name], left = give(d, d.Target, d.Floor, left, window)
		}
	}
	return out
}

// give moves d from running every from toward every to (shorter), spending at
// most left requests per window: the interval it gets, and what is left.
func give(d Demand, from, to time.Duration, left float64, window time.Duration) (time.Duration, float64) {
	cost := max(d.Cost, 1) * float64(window)
	have := cost / float64(from)
	extra := cost/float64(to) - have
	if extra <= left {
		return to, left - extra
	}
	return time.Duration(cost / (have + left)), 0
}

// allocateKeeping returns intervals that spend at most use × budget requests per
// window (0 < use <= 1), the rest kept free for retries and costs measured late.
// When the budget has room beyond the targets, the part kept comes off every
// interval shortened below its target alike: each such resource runs at the
// same fraction k <= use of the rate Allocate(budget) gives it, never slower
// than its target. Taking it all off the last resource shortened, as
// Allocate(use × budget) does, would leave that one (users, by default) a whole
// headroom's worth of requests behind its budget-bound interval while the
// others keep theirs. When the shortened resources cannot give that much, or the
// budget cannot even meet the targets, it is Allocate(use × budget): then the
// budget is short and priority decides who waits.
func allocateKeeping(budget, use float64, window time.Duration, ds []Demand) map[string]time.Duration {
	want := use * budget
	full := Allocate(budget, window, ds)
	if budget <= 0 || use >= 1 {
		return full
	}
	rate := func(d Demand, every time.Duration) float64 { return max(d.Cost, 1) * float64(window) / float64(every) }
	short := map[string]bool{} // shortened below the target, not yet capped at it
	for _, d := range ds {
		short[d.Name] = full[d.Name] < d.Target
	}
	for range ds { // each round caps at least one more resource at its target, or ends
		var fixed, free float64
		for _, d := range ds {
			if short[d.Name] {
				free += rate(d, full[d.Name])
			} else {
				fixed += rate(d, full[d.Name])
			}
		}
		if free == 0 || fixed >= want {
			return Allocate(want, window, ds)
		}
		k := (want - fixed) / free // the rate every shortened resource keeps
		if k >= 1 {
			// Allocate(budget) already spends no more than want: every resource
			// it shortened sits at its floor. Dividing by k would take them
			// below it, and with a budget far beyond the demand (a large plan,
			// an API without a limit) poll one resource in a busy loop.
			return full
		}
		out, capped := make(map[string]time.Duration, len(ds)), false
		for _, d := range ds {
			switch every := time.Duration(float64(full[d.Name]) / k); {
			case !short[d.Name]:
				out[d.Name] = full[d.Name]
			case every >= d.Target:
				short[d.Name], capped = false, true
				full[d.Name] = d.Target
			default:
				out[d.Name] = every
			}
		}
		if !capped {
			return out
		}
	}
	return Allocate(want, window, ds)
}
