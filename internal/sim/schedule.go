package sim

import "container/heap"

// action is one timed step of the world. seq breaks ties in scheduling order, so
// actions due at the same second always run in the same order.
type action struct {
	at  sec
	seq uint64
	fn  func()
}

// schedule is the discrete-event queue: a min-heap of actions by (at, seq). It is
// not safe for concurrent use; the Sim's mutex guards it.
type schedule struct {
	h   actionHeap
	seq uint64
}

// push schedules fn at at.
func (s *schedule) push(at sec, fn func()) {
	s.seq++
	heap.Push(&s.h, action{at: at, seq: s.seq, fn: fn})
}

// popDue removes and returns the earliest action due at or before now.
func (s *schedule) popDue(now sec) (action, bool) {
	if len(s.h) == 0 || s.h[0].at > now {
		return action{}, false
	}
	return heap.Pop(&s.h).(action), true
}

// len is the number of pending actions.
func (s *schedule) len() int { return len(s.h) }

type actionHeap []action

func (h actionHeap) Len() int { return len(h) }
func (h actionHeap) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].seq < h[j].seq
}
func (h actionHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *actionHeap) Push(x any)   { *h = append(*h, x.(action)) }
func (h *actionHeap) Pop() any {
	old := *h
	n := len(old)
	a := old[n-1]
	old[n-1] = action{}
	*h = old[:n-1]
	return a
}
