package backfill

import (
	"encoding/binary"
	"slices"
)

// idSet finds the ids a report lists more than once, holding what it has seen
// as a sorted run of varint gaps: a byte or two per id for ids that grow about
// as a call center's do (at most ten for ids scattered over all of int64),
// where a sorted []int64 of a million calls took 8 MB, and twice that while it
// grew. Ids come in chunks: each full chunk is sorted and merged into the run.
type idSet struct {
	chunk []int64
	run   []byte // the distinct ids seen, ascending, as uvarint gaps from 0
	again map[int64]bool
}

// idChunk is how many ids an idSet gathers before merging them (512 KB).
const idChunk = 1 << 16

// add records one more listing of id (> 0).
func (s *idSet) add(id int64) {
	if s.chunk == nil {
		s.chunk = make([]int64, 0, idChunk)
	}
	s.chunk = append(s.chunk, id)
	if len(s.chunk) == idChunk {
		s.merge()
	}
}

// listedAgain returns the ids added more than once (nil: none).
func (s *idSet) listedAgain() map[int64]bool {
	s.merge()
	s.chunk, s.run = nil, nil
	return s.again
}

// merge merges the chunk into the run, noting the ids met twice.
func (s *idSet) merge() {
	if len(s.chunk) == 0 {
		return
	}
	slices.Sort(s.chunk)
	out := make([]byte, 0, len(s.run)+2*len(s.chunk))
	var last int64 // ids are > 0: none is 0
	put := func(id int64) {
		if id == last {
			if s.again == nil {
				s.again = map[int64]bool{}
			}
			s.again[id] = true
			return
		}
		out = binary.AppendUvarint(out, uint64(id-last))
		last = id
	}
	run, cur := s.run, int64(0)
	next := func() bool { // the run's next id into cur
		if len(run) == 0 {
			return false
		}
		gap, n := binary.Uvarint(run)
		run, cur = run[n:], cur+int64(gap)
		return true
	}
	has := next()
	for _, id := range s.chunk {
		for has && cur < id {
			put(cur)
			has = next()
		}
		put(id)
	}
	for has {
		put(cur)
		has = next()
	}
	s.run, s.chunk = out, s.chunk[:0]
}
