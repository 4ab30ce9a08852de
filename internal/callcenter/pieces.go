package callcenter

import (
	"sync"
	"time"
)

// piece is a part of a by_time window read whole, and the records it served.
type piece struct {
	w TimeWindow
	n int
}

// pieceMemory remembers how the last read of one list's window was cut into
// pieces, so that the next read, whose window mostly overlaps it (a poller reads
// the same recent past every cycle), asks for pieces that fit one page straight
// away instead of finding the split again with requests: a full first page, then
// halves. A nil *pieceMemory remembers nothing. Safe for concurrent use.
type pieceMemory struct {
	mu     sync.Mutex
	pieces []piece // contiguous, in time order
}

// mergeFill is how full (of per) a planned piece may be from the records its
// remembered parts held: the rest is room for records created since.
const mergeFill = 0.75

// plan cuts w into the pieces to read: at the remembered cuts within w, merging
// neighbours whose records together fill at most mergeFill of a page, the first
// piece starting at w.From and the last ending at w.To (records created since
// the last read land there; if they overflow it, the read splits it and the
// memory learns the new cut). Nothing remembered: w whole.
func (m *pieceMemory) plan(w TimeWindow, per int) []TimeWindow {
	if m == nil {
		return []TimeWindow{w}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []TimeWindow
	from, n := w.From, 0
	for _, p := range m.pieces {
		if !p.w.To.After(w.From) {
			continue // before the window
		}
		if !p.w.From.Before(w.To) {
			break
		}
		if p.w.From.After(from) && n+p.n > int(mergeFill*float64(per)) {
			out = append(out, TimeWindow{From: from, To: p.w.From})
			from, n = p.w.From, 0
		}
		n += p.n
	}
	return append(out, TimeWindow{From: from, To: w.To})
}

// keep remembers the pieces of the read just done (in time order).
func (m *pieceMemory) keep(ps []piece) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.pieces = append(m.pieces[:0], ps...)
}

// cuts returns the start of every remembered piece after the first (tests).
func (m *pieceMemory) cuts() []time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []time.Time
	for i, p := range m.pieces {
		if i > 0 {
			out = append(out, p.w.From)
		}
	}
	return out
}
