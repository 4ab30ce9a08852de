package diff

import (
	"slices"
	"strconv"
	"time"

	"github.com/callbus/callbus/events"
)

// pending is an event decided before its turn to be emitted: participants are
// diffed before the call's fields (whether the call ends decides how quiet fields
// are treated) but their events follow call.updated. It holds no pointer to its
// data (made when emitted, on the stack): a call's participants' events cost no
// allocation but their ids.
type pending struct {
	typ    events.Type
	entity string
	i      int // the participant's index in the call's list
	prev   int // its status before, of a status change
}

// emit emits the event of participant p of call c.
func (pe *pending) emit(em *emitter, c *events.Call) {
	p := &c.Participants[pe.i]
	if pe.typ == events.ParticipantJoined {
		em.emit(pe.typ, pe.entity, p.CreatedTime, &events.ParticipantData{CallID: c.ID, Participant: *p})
		return
	}
	em.emit(pe.typ, pe.entity, p.UpdatedTime, &events.ParticipantStatusData{
		CallID: c.ID, Participant: *p,
		Previous: events.CallStatus{Code: pe.prev, Label: events.CallStatusLabel(pe.prev)},
		Current:  events.CallStatus{Code: p.CallStatus, Label: events.CallStatusLabel(p.CallStatus)},
	})
}

// callNames are the entities of a call's events, the call's and each listed
// participant's, cut from one string (one allocation, not one per participant
// and one per key); a participant's key in the snapshot (its id) ends its
// entity. The call's entity begins the first participant's.
type callNames struct {
	all    string
	call   string // calls/<id>
	prefix int    // the length of calls/<id>/participants/
	next   int    // where the next participant's entity starts in all
}

func newCallNames(c *events.Call) callNames {
	var buf [256]byte // a call's usual participants: made on the stack
	b := strconv.AppendInt(append(buf[:0], "calls/"...), c.ID, 10)
	n := len(b)
	b = append(b, "/participants/"...)
	prefix := len(b)
	for i, p := range c.Participants {
		if i > 0 {
			b = append(b, b[:prefix]...)
		}
		b = strconv.AppendInt(b, p.ID, 10)
	}
	if len(c.Participants) == 0 {
		b = b[:n]
	}
	all := string(b)
	return callNames{all: all, call: all[:n], prefix: prefix}
}

// participant returns the entity and key of the next participant of the call's
// list, whose id is id.
func (cn *callNames) participant(id int64) (entity, key string) {
	var digits [20]byte
	end := cn.next + cn.prefix + len(strconv.AppendInt(digits[:0], id, 10))
	entity = cn.all[cn.next:end]
	cn.next = end
	return entity, entity[cn.prefix:]
}

// participants applies the participants c lists to the snapshot and returns their
// events, appended to out; names are c's (newCallNames). When c is a newer copy
// of the call (newer updated_time), a participant it no longer lists is marked
// gone; one listed again is back. undated is the time of a status change whose
// participant has no updated_time; read is the time of the read, beyond which an
// updated_time is not believed (see upTo).
func (s *callSnap) participants(out []pending, names callNames, c events.Call, newer bool, undated, read time.Time) []pending {
	listed := make([]string, 0, 8) // a handful: on the stack
	for i, p := range c.Participants {
		entity, key := names.participant(p.ID)
		listed = append(listed, key)
		if ev, ok := s.participant(key, p, undated, read); ok {
			ev.entity, ev.i = entity, i
			out = append(out, ev)
		}
	}
	if newer {
		for key, ps := range s.P {
			if !ps.Gone && !slices.Contains(listed, key) {
				ps.Gone = true
				s.P[key] = ps
			}
		}
	}
	return out
}

// participant applies one listed participant. A copy with an older updated_time
// is ignored; one with the same updated_time, or none, changes the status only
// forward (see forward): the equal-time rule that keeps a stale copy from turning a
// change back. A change without updated_time is taken as of undated.
func (s *callSnap) participant(key string, p events.Participant, undated, read time.Time) (pending, bool) {
	upd := apiTime(p.UpdatedTime, read)
	old, seen := s.P[key]
	switch {
	case !seen:
		s.P[key] = partSnap{S: p.CallStatus, U: upd}
		return pending{typ: events.ParticipantJoined}, true
	case upd != 0 && upd < old.U:
		old.Gone = false // older than what we have: keep it, but it is listed
		s.P[key] = old
	case p.CallStatus != old.S && (upd > old.U || forward(old.S, p.CallStatus)):
		if upd == 0 {
			upd = ms(undated)
		}
		s.P[key] = partSnap{S: p.CallStatus, U: max(upd, old.U)}
		return pending{typ: events.ParticipantStatusChanged, prev: old.S}, true
	default:
		s.P[key] = partSnap{S: old.S, U: max(upd, old.U)}
	}
	return pending{}, false
}

// forward reports whether a participant moving from status a to b goes forward in
// a call's progress: default (0), routed to queue (6), connecting (13), live (8 in
// progress, 12 on hold, 16 recording a voicemail), terminal. Live statuses come and
// go in any order (hold and back), and a terminal status is final, so neither
// moves forward within its stage; unknown statuses never do.
func forward(a, b int) bool {
	sa, sb := stage(a), stage(b)
	return sb > sa && (sa >= 0 || sb == stageTerminal)
}

const stageTerminal = 4

func stage(status int) int {
	if events.CallStatusTerminal(status) {
		return stageTerminal
	}
	switch status {
	case 0:
		return 0
	case 6:
		return 1
	case 13:
		return 2
	case 8, 12, 16:
		return 3
	}
	return -1
}
