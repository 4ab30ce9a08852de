package publish

import "testing"

// An idle relay gives back the room a burst left, but keeps a trickle's.
func TestShedSlice(t *testing.T) {
	big := make([]int, 0, idleCap+1)
	if got := shedSlice(big); got != nil {
		t.Errorf("an empty buffer with room for %d kept its memory", cap(big))
	}
	small := make([]int, 0, idleCap)
	if got := shedSlice(small); cap(got) != idleCap {
		t.Errorf("a trickle's buffer (room for %d) was given up", idleCap)
	}
	full := make([]int, 1, 4*idleCap)
	if got := shedSlice(full); len(got) != 1 || cap(got) != 4*idleCap {
		t.Errorf("a buffer still holding entries was changed: len %d cap %d", len(got), cap(got))
	}
	fl := &flight{queue: make([]inflight, 0, 1024)}
	r := &Relay{published: make([]Published, 0, 512), replies: &ackWindow{slots: make([]ackSlot, 0, 512)}}
	r.shed(fl)
	if fl.queue != nil || r.published != nil || r.replies.slots != nil {
		t.Errorf("an idle relay kept its window (cap %d), its acknowledgements (cap %d) or its replies' slots (cap %d)",
			cap(fl.queue), cap(r.published), cap(r.replies.slots))
	}
}
