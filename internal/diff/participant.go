package diff

import (
	"slices"
	"strconv"
	"time"

	"github.com/callbus/callbus/events"
)

// pending is an event decided before its turn to be emitted: participants are
// diffed before the call's fields (whether the call ends decides how quiet fields
// are treated) but their events follow call.updated.
type pending struct {
	typ    events.Type
	entity string
	at     time.Time
	data   any
}

// participants applies the participants c lists to the snapshot and returns their
// events, appended to out. When c is a newer copy of the call (newer updated_time), a participant it
// no longer lists is marked gone; one listed again is back. undated is the time of
// a status change whose participant has no updated_time; read is the time of the
// read, beyond which an updated_time is not believed (see upTo).
func (s *callSnap) participants(out []pending, callEntity string, c events.Call, newer bool, undated, read time.Time) []pending {
	listed := make([]string, 0, 8) // a handful: on the stack
	for _, p := range c.Participants {
		key := strconv.FormatInt(p.ID, 10)
		listed = append(listed, key)
		if ev, ok := s.participant(key, c.ID, p, undated, read); ok {
			ev.entity = callEntity + "/participants/" + key
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
func (s *callSnap) participant(key string, callID int64, p events.Participant, undated, read time.Time) (pending, bool) {
	upd := apiTime(p.UpdatedTime, read)
	old, seen := s.P[key]
	switch {
	case !seen:
		s.P[key] = partSnap{S: p.CallStatus, U: upd}
		return pending{events.ParticipantJoined, "", p.CreatedTime, &events.ParticipantData{CallID: callID, Participant: p}}, true
	case upd != 0 && upd < old.U:
		old.Gone = false // older than what we have: keep it, but it is listed
		s.P[key] = old
	case p.CallStatus != old.S && (upd > old.U || forward(old.S, p.CallStatus)):
		if upd == 0 {
			upd = ms(undated)
		}
		s.P[key] = partSnap{S: p.CallStatus, U: max(upd, old.U)}
		return pending{events.ParticipantStatusChanged, "", p.UpdatedTime, &events.ParticipantStatusData{
			CallID: callID, Participant: p,
			Previous: events.CallStatus{Code: old.S, Label: events.CallStatusLabel(old.S)},
			Current:  events.CallStatus{Code: p.CallStatus, Label: events.CallStatusLabel(p.CallStatus)},
		}}, true
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
