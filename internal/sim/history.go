package sim

import (
	"math/rand/v2"
	"sort"
)

// Id bases of the lazily generated history (Config.History): a range of their own
// for each entity, well above the live ones, so a million history calls leave the
// live id spaces untouched. Each history call has at most two participants and two
// recordings.
const (
	histCallBase   = 100_000_001
	histPartBase   = 110_000_001
	histMetricBase = 120_000_001
	histRecBase    = 130_000_001
	// MaxHistory bounds Config.History so the ranges above do not meet.
	MaxHistory = 4_000_000
	histSalt   = 0x4157_0a7c_5eed
)

// history is the account's lazily generated past: n ended calls with final
// metrics, call i created in [from+i·gap, from+(i+1)·gap). Nothing but these three
// numbers is kept: a call is rebuilt from its index whenever a report needs it, so
// a million-call history costs no memory.
type history struct {
	n    int64
	from sec
	gap  int64 // seconds per call, at least 1
}

// newHistory places n calls over span (seconds; 0: at the configured call rate)
// ending at end.
func newHistory(n int, span int64, rate float64, end sec) history {
	if n <= 0 {
		return history{}
	}
	if rate <= 0 {
		rate = 2
	}
	gap := max(int64(60/rate), 1)
	if span > 0 {
		gap = max(span/int64(n), 1)
	}
	return history{n: int64(n), from: end - sec(gap*int64(n)), gap: gap}
}

// histRange returns the indexes [lo, hi) of the history calls created within
// [from, to] (both inclusive).
func (w *world) histRange(from, to sec) (int64, int64) {
	h := w.hist
	search := func(t sec) int64 { // first index created at or after t
		i := int64(t-h.from) / h.gap
		i = min(max(i-1, 0), h.n)
		return i + int64(sort.Search(int(min(h.n-i, 3)), func(k int) bool { return w.histCreated(i+int64(k)) >= t }))
	}
	if h.n == 0 {
		return 0, 0
	}
	lo, hi := search(from), search(to+1)
	return lo, max(lo, hi)
}

// histRand is the random source of history call i: its own, so any call can be
// rebuilt alone, in any order, identically.
func (w *world) histRand(i int64) *rand.Rand {
	return rand.New(rand.NewPCG(w.cfg.Seed^histSalt, uint64(i)))
}

// histCreated is the created time of history call i.
func (w *world) histCreated(i int64) sec {
	return w.hist.from + sec(i*w.hist.gap) + sec(w.histRand(i).Int64N(w.hist.gap))
}

// histCall rebuilds history call i: an ended call with its final metric, drawn as
// the backlog's are, against the account's current users and numbers. It leaves
// the world's own random sequence and id counters as they were.
func (w *world) histCall(i int64) *call {
	rng, part, rec := w.rng, w.nextPart, w.nextRec
	defer func() { w.rng, w.nextPart, w.nextRec = rng, part, rec }()
	w.rng = w.histRand(i)
	t := w.hist.from + sec(i*w.hist.gap) + sec(w.rng.Int64N(w.hist.gap))
	w.nextPart, w.nextRec = histPartBase+2*i, histRecBase+2*i
	return w.backlogCall(histCallBase+i, histMetricBase+i, t)
}

// HistoryCallIDs returns the ids of the history calls (Config.History), oldest
// first: every one is ended and has a final metric, and none is in the truth log.
func (s *Sim) HistoryCallIDs() []int64 {
	ids := make([]int64, s.w.hist.n)
	for i := range ids {
		ids[i] = histCallBase + int64(i)
	}
	return ids
}
