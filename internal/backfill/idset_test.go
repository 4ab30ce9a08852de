package backfill

import (
	"maps"
	"math/rand/v2"
	"testing"
)

// idSet finds exactly the ids added more than once, whatever their order, their
// spread and the chunks they fall in.
func TestIDSetFindsTheIdsListedAgain(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name   string
		n      int
		spread int64
	}{
		{"none", 0, 1},
		{"dense, within a chunk", 1000, 1},
		{"dense, many chunks", 3*idChunk + 17, 1},
		{"sparse", 2*idChunk + 5, 1 << 40},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s idSet
			count := map[int64]int{}
			for i := range tc.n {
				id := 1_000_000 + int64(i)*tc.spread
				if i%97 == 0 && i > 0 { // a copy of an earlier record, anywhere
					id = 1_000_000 + rng.Int64N(int64(i))*tc.spread
				}
				count[id]++
				s.add(id)
			}
			want := map[int64]bool{}
			for id, c := range count {
				if c > 1 {
					want[id] = true
				}
			}
			got := s.listedAgain()
			if len(want) == 0 && len(got) == 0 {
				return
			}
			if !maps.Equal(got, want) {
				t.Errorf("%d ids listed again, want %d", len(got), len(want))
			}
		})
	}
}

// A run of a million growing ids takes about a byte each.
func TestIDSetRunIsSmall(t *testing.T) {
	var s idSet
	for i := range int64(1_000_000) {
		s.add(5_000_000 + i)
	}
	s.merge()
	if len(s.run) > 1_100_000 {
		t.Errorf("a million growing ids in %d bytes, want about one each", len(s.run))
	}
	if s.again != nil {
		t.Errorf("ids listed again: %v, want none", s.again)
	}
}
