package callcenter

import (
	"math/rand/v2"
	"testing"
)

// idSet agrees with a map over many adds, across merges, with repeats.
func TestIDSet(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var s idSet
	want := map[int64]bool{}
	next := int64(0)
	for i := range 3 * idSetMerge {
		id := r.Int64N(5 * idSetMerge)
		switch {
		case i%3 == 0:
			id = -id // any int64
		case i%3 == 1 && i < 2*idSetMerge:
			// Runs of growing ids (a list oldest first) between the others: the
			// ids above the set's that skip the map.
			next += r.Int64N(3)
			id = next
		}
		if got := s.add(id); got != !want[id] {
			t.Fatalf("add %d: got new=%v, want %v", id, got, !want[id])
		}
		want[id] = true
	}
	if s.len() != len(want) {
		t.Errorf("len %d, want %d", s.len(), len(want))
	}
	for id := range int64(5 * idSetMerge) {
		for _, v := range []int64{id, -id} {
			if s.has(v) != want[v] {
				t.Fatalf("has %d: got %v, want %v", v, s.has(v), want[v])
			}
		}
	}
	for i := 1; i < len(s.sorted); i++ {
		if s.sorted[i-1] >= s.sorted[i] {
			t.Fatalf("sorted ids out of order at %d: %d, %d", i, s.sorted[i-1], s.sorted[i])
		}
	}
}
