package diff

import (
	"slices"

	"github.com/callbus/callbus/events"
)

// QuietCallFields are the tracked call fields that tick while a call is live
// (bill_duration counts up every second on some API replicas): while the call is
// open their changes are not announced (nor stored, so a live call costs no write
// per read); the observation that ends the call stores them silently, its
// call.ended carrying the final value; a change after the end gives call.updated.
var QuietCallFields = []string{"bill_duration"}

// fields applies the tracked fields of c, a call seen before (callWith stores
// those of its first sight as they are), to the snapshot and returns the changes
// to announce. newer: c has a newer updated_time than the snapshot; a copy with
// the same one (or none) only counts where it gains a value that was empty
// (gains), so a stale replica's copy neither reverts a field nor flips it back.
// ending: c is the observation that ends the call.
func (s *callSnap) fields(c events.Call, newer, ending bool, sc *scratch) []events.Change {
	fs := callFields(c, s.F, sc)
	open := s.End == 0 && !ending
	for i, f := range fs {
		quiet := slices.Contains(QuietCallFields, f.name)
		old, had := s.F[f.name]
		switch {
		case quiet && open:
			fs[i].known = false // carried quietly: the stored value stands
		case !newer && had && !gains(old, f.value):
			fs[i].known = false // same updated_time: not a change we can trust
		}
	}
	ch := compare(s.F, fs, false)
	if ending {
		ch = slices.DeleteFunc(ch, func(c events.Change) bool { return slices.Contains(QuietCallFields, c.Field) })
	}
	return ch
}

// gains reports whether a field goes from empty (null, "" or []) to a value.
func gains(old, cur string) bool {
	empty := func(v string) bool { return v == "null" || v == `""` || v == "[]" }
	return empty(old) && !empty(cur)
}
