package diff

import (
	"fmt"
	"time"

	"github.com/callbus/callbus/events"
)

// callSnap is what callbus keeps of a call between polls.
type callSnap struct {
	Seq int64               `json:"q"`
	Upd int64               `json:"u"`           // updated_time applied, unix ms
	End int64               `json:"e,omitempty"` // when it ended, unix ms; 0 while open, never 0 once ended
	F   map[string]string   `json:"f,omitempty"` // tracked fields, canonical JSON
	P   map[string]partSnap `json:"p,omitempty"` // participants by id
}

type partSnap struct {
	S int   `json:"s"` // call_status
	U int64 `json:"u"` // updated_time, unix ms (0: the API never gave one)
	// Gone: a newer copy of the call no longer lists the participant. It keeps its
	// last status, emits nothing, and no longer holds the call open.
	Gone bool `json:"g,omitempty"`
}

// CallState is what other diffs and the poller need to know of a call.
type CallState struct {
	Created time.Time // the call's created_time (zero when unknown)
	Ended   bool
	EndedAt time.Time // the last participant's terminal update
	// Overdue, set by the caller, says the call ended so long ago that its metric
	// is taken as final even though the API never updated it after the end.
	Overdue bool
}

// CallResult is the outcome of one call observation.
type CallResult struct {
	Events  []events.Envelope
	Snap    []byte // the next snapshot; equal to the previous one when !Changed
	Changed bool
	State   CallState
}

// Call diffs an observation c of a call against its snapshot prev (nil when the
// call was never seen); seen is the poller's time of the read, which dates events
// whose API time is null (call.created of a call without created_time: seen
// itself). Events, in order: call.created (first sight),
// call.updated (tracked fields), participant.joined for each new participant (also
// those present at first sight, so every participant's status chain starts at its
// joined event), participant.status_changed, and call.ended, once, when every
// participant still listed is terminal.
//
// Hostile copies: a copy older than the snapshot is ignored; a copy with the same
// updated_time (or none) may only move things forward (see forward and gains), so a
// stale replica's copy never turns a change back. Quiet fields (bill_duration)
// change silently while the call is open: call.ended carries their final value.
func Call(scope Scope, prev []byte, c events.Call, seen time.Time) (CallResult, error) {
	return callWith(scope, prev, c, seen, nil)
}

// callWith is Call, its events on r's memory when r is not nil (see Reuse).
func callWith(scope Scope, prev []byte, c events.Call, seen time.Time, r *Reuse) (CallResult, error) {
	if seen.IsZero() {
		return CallResult{}, fmt.Errorf("diff call %d: no time of the read", c.ID)
	}
	sc := getScratch()
	defer sc.release()
	var s callSnap
	if prev != nil {
		if err := decodeCallSnapIn(prev, &s, sc); err != nil {
			return CallResult{}, fmt.Errorf("diff call %d: decode snapshot: %w", c.ID, err)
		}
	}
	s.forgetAhead(seen)
	creating, upd := prev == nil, apiTime(c.UpdatedTime, seen)
	if !creating && upd != 0 && upd < s.Upd {
		return CallResult{Snap: prev, State: s.state(c)}, nil // stale observation
	}
	if s.F == nil {
		s.F = sc.fields // a call's fields, without growing
	}
	if s.P == nil {
		s.P = sc.parts
	}
	newer := creating || upd > s.Upd
	names := newCallNames(&c)
	entity := names.call
	em := r.emitter(scope, s.Seq)
	defer em.keep()
	em.fallback, em.latest = orTime(c.UpdatedTime, seen), seen
	if creating {
		// call.created and call.ended: about 1.2 KB and 350 B per participant
		// each; participant.joined: about 400 B each.
		em.bufSize = 2560 + 1152*len(c.Participants)
	}
	var few [4]pending // a call's usual participants' events: on the stack
	parts := s.participants(few[:0], names, c, newer, em.fallback, seen)
	end, ending := s.ended(c, seen)
	created := -1 // the index of call.created among em's events
	if creating {
		// A call without created_time is dated when first seen: the read that
		// creates its snapshot. Its id does not depend on the date (a creation
		// has no transition), so a read again after a crash dedupes.
		created = len(em.events)
		em.emit(events.CallCreated, entity, orTime(c.CreatedTime, seen), &events.CallData{Call: c})
	}
	var first []field // a new call's fields: stored as they are, no change to announce
	if creating {
		first = callFields(c, nil, sc)
	} else if ch := s.fields(c, newer, ending, sc); len(ch) > 0 {
		em.emit(events.CallUpdated, entity, c.UpdatedTime, &events.CallUpdatedData{Call: c, Changes: ch})
	}
	for i := range parts {
		parts[i].emit(em, &c)
	}
	if ending {
		s.End = ms(end)
		if created >= 0 && em.err == nil {
			em.emitCopy(events.CallEnded, entity, end, created) // the same call: the same data
		} else {
			em.emit(events.CallEnded, entity, end, &events.CallData{Call: c})
		}
	}
	s.Upd, s.Seq = max(s.Upd, upd), em.seq
	if em.err != nil {
		return CallResult{}, fmt.Errorf("diff call %d: %w", c.ID, em.err)
	}
	next := encodeCallSnap(make([]byte, 0, max(len(prev), 224)+32), &s, first)
	return CallResult{Events: em.events, Snap: next, Changed: string(next) != string(prev), State: s.state(c)}, nil
}

// forgetAhead drops the times of the snapshot that lie more than maxAhead after
// the read: taken from a record dated ahead before (an earlier release kept
// them), they would make every real copy look stale.
func (s *callSnap) forgetAhead(read time.Time) {
	limit := ms(read.Add(maxAhead))
	if s.Upd > limit {
		s.Upd = 0
	}
	for k, p := range s.P {
		if p.U > limit {
			p.U = 0
			s.P[k] = p
		}
	}
}

func (s *callSnap) state(c events.Call) CallState {
	return CallState{Created: c.CreatedTime, Ended: s.End != 0, EndedAt: fromMS(s.End)}
}

// ended reports whether the call ends with this observation (it had not yet, and
// every participant still listed is terminal), and when: the last terminal update,
// or when no participant has an updated_time, the call's, or seen.
func (s *callSnap) ended(c events.Call, seen time.Time) (time.Time, bool) {
	if s.End != 0 {
		return time.Time{}, false
	}
	var last int64
	listed := 0
	for _, p := range s.P {
		if p.Gone {
			continue
		}
		if !events.CallStatusTerminal(p.S) {
			return time.Time{}, false
		}
		last, listed = max(last, p.U), listed+1
	}
	if listed == 0 {
		return time.Time{}, false
	}
	if last == 0 {
		return orTime(c.UpdatedTime, seen), true
	}
	return fromMS(last), true
}

// CallStateOf reads the state of a call from its snapshot (for the metric diff).
func CallStateOf(snap []byte) (CallState, error) {
	end, err := callSnapEnd(snap)
	if err != nil {
		return CallState{}, fmt.Errorf("decode call snapshot: %w", err)
	}
	return CallState{Ended: end != 0, EndedAt: fromMS(end)}, nil
}

// orTime is t, or else when t is zero.
func orTime(t, otherwise time.Time) time.Time {
	if t.IsZero() {
		return otherwise
	}
	return t
}
