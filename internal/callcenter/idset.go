package callcenter

import "slices"

// idSet is a set of record ids in about 8 bytes an id: a sorted slice, and the
// ids added since it was last sorted in a small map. A window reader remembers
// every id of its window (a backlog: 100,000 calls and more); a map of them took
// about 20 bytes an id, and twice that while it grew. An id above every id in
// the set (a list read oldest first, whose ids grow) is appended to the sorted
// slice at once, neither looked up nor put in the map: on a backlog the map's
// lookups were a fiftieth of the poller's CPU. Not safe for concurrent use; the
// zero value is an empty set.
type idSet struct {
	sorted []int64
	recent map[int64]struct{} // not in sorted; merged into it at idSetMerge ids
	top    int64              // the largest id in the set, when it is not empty
}

// idSetMerge is how many ids wait in the map before they are merged into the
// sorted slice: merging costs a pass over the slice, so the rarer the better,
// and the map costs memory, so the smaller the better.
const idSetMerge = 4096

// has reports whether id is in the set.
func (s *idSet) has(id int64) bool {
	if s.above(id) {
		return false
	}
	if _, ok := s.recent[id]; ok {
		return true
	}
	_, ok := slices.BinarySearch(s.sorted, id)
	return ok
}

// add puts id in the set and reports whether it was new.
func (s *idSet) add(id int64) bool {
	if s.above(id) {
		// Above every id, sorted's included: appended, it stays sorted.
		s.sorted, s.top = append(s.sorted, id), id
		return true
	}
	if s.has(id) {
		return false
	}
	if s.recent == nil {
		s.recent = make(map[int64]struct{}, 64)
	}
	s.recent[id] = struct{}{}
	if len(s.recent) >= idSetMerge {
		s.merge()
	}
	return true
}

// above reports whether id is larger than every id in the set.
func (s *idSet) above(id int64) bool { return s.len() == 0 || id > s.top }

// len is the number of ids in the set.
func (s *idSet) len() int { return len(s.sorted) + len(s.recent) }

// merge moves the recent ids into the sorted slice.
func (s *idSet) merge() {
	add := make([]int64, 0, len(s.recent))
	for id := range s.recent {
		add = append(add, id)
	}
	slices.Sort(add)
	// Merged from the end, in place once the slice has room: no second copy of
	// the set while it grows.
	old := len(s.sorted)
	s.sorted = slices.Grow(s.sorted, len(add))[:old+len(add)]
	i, j := old-1, len(add)-1
	for k := len(s.sorted) - 1; j >= 0; k-- {
		if i >= 0 && s.sorted[i] > add[j] {
			s.sorted[k] = s.sorted[i]
			i--
		} else {
			s.sorted[k] = add[j]
			j--
		}
	}
	clear(s.recent)
}
