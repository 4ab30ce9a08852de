package diff

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/callbus/callbus/internal/callcenter"
	"github.com/callbus/callbus/internal/event"
)

// callSnap is what callbus keeps of a call between polls.
type callSnap struct {
	Seq int64               `json:"q"`
	Upd int64               `json:"u"`           // updated_time applied, unix ms
	End int64               `json:"e,omitempty"` // when it ended, unix ms; 0 while open
	F   map[string]string   `json:"f,omitempty"` // tracked fields, canonical JSON
	P   map[string]partSnap `json:"p,omitempty"` // participants by id
}

type partSnap struct {
	S int   `json:"s"` // call_status
	U int64 `json:"u"` // updated_time, unix ms
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
	Events  []event.Envelope
	Snap    []byte // the next snapshot; equal to the previous one when !Changed
	Changed bool
	State   CallState
}

// Call diffs an observation c of a call against its snapshot prev (nil when the
// call was never seen). Events, in order: call.created (first sight), call.updated
// (tracked fields), participant.joined for each new participant (also those present
// at first sight, so every participant's status chain starts at its joined event),
// participant.status_changed, and call.ended once every participant is terminal.
func Call(scope Scope, prev []byte, c callcenter.Call) (CallResult, error) {
	var s callSnap
	if prev != nil {
		if err := json.Unmarshal(prev, &s); err != nil {
			return CallResult{}, fmt.Errorf("diff call %d: decode snapshot: %w", c.ID, err)
		}
	}
	creating := prev == nil
	if !creating && ms(c.UpdatedTime) < s.Upd {
		return CallResult{Snap: prev, State: s.state(c)}, nil // stale observation
	}
	if s.F == nil {
		s.F = map[string]string{}
	}
	if s.P == nil {
		s.P = map[string]partSnap{}
	}
	entity := "calls/" + strconv.FormatInt(c.ID, 10)
	em := &emitter{scope: scope, seq: &s.Seq}
	if creating {
		em.emit(event.CallCreated, entity, c.CreatedTime, event.CallData{Call: c})
	}
	if ch := compare(s.F, callFields(c), creating); len(ch) > 0 {
		em.emit(event.CallUpdated, entity, c.UpdatedTime, event.CallUpdatedData{Call: c, Changes: ch})
	}
	for _, p := range c.Participants {
		s.participant(em, entity, c.ID, p)
	}
	if s.End == 0 {
		if end, ok := endedAt(s.P); ok && len(c.Participants) > 0 {
			s.End = ms(end)
			em.emit(event.CallEnded, entity, end, event.CallData{Call: c})
		}
	}
	s.Upd = max(s.Upd, ms(c.UpdatedTime))
	if em.err != nil {
		return CallResult{}, fmt.Errorf("diff call %d: %w", c.ID, em.err)
	}
	next, err := json.Marshal(s)
	if err != nil {
		return CallResult{}, fmt.Errorf("diff call %d: encode snapshot: %w", c.ID, err)
	}
	return CallResult{Events: em.events, Snap: next, Changed: string(next) != string(prev), State: s.state(c)}, nil
}

func (s *callSnap) participant(em *emitter, callEntity string, callID int64, p callcenter.Participant) {
	key := strconv.FormatInt(p.ID, 10)
	entity := callEntity + "/participants/" + key
	old, seen := s.P[key]
	switch {
	case !seen:
		s.P[key] = partSnap{S: p.CallStatus, U: ms(p.UpdatedTime)}
		em.emit(event.ParticipantJoined, entity, p.CreatedTime, event.ParticipantData{CallID: callID, Participant: p})
	case ms(p.UpdatedTime) < old.U:
		// older than what we have: keep it
	case p.CallStatus != old.S:
		s.P[key] = partSnap{S: p.CallStatus, U: ms(p.UpdatedTime)}
		em.emit(event.ParticipantStatusChanged, entity, p.UpdatedTime, event.ParticipantStatusData{
			CallID: callID, Participant: p,
			Previous: event.CallStatus{Code: old.S, Label: callcenter.CallStatusLabel(old.S)},
			Current:  event.CallStatus{Code: p.CallStatus, Label: callcenter.CallStatusLabel(p.CallStatus)},
		})
	default:
		s.P[key] = partSnap{S: old.S, U: ms(p.UpdatedTime)}
	}
}

func (s *callSnap) state(c callcenter.Call) CallState {
	return CallState{Created: c.CreatedTime, Ended: s.End != 0, EndedAt: fromMS(s.End)}
}

// endedAt reports whether every participant is terminal, and when the last one got
// there.
func endedAt(ps map[string]partSnap) (time.Time, bool) {
	var last int64
	for _, p := range ps {
		if !callcenter.CallStatusTerminal(p.S) {
			return time.Time{}, false
		}
		last = max(last, p.U)
	}
	return fromMS(last), len(ps) > 0
}

// CallStateOf reads the state of a call from its snapshot (for the metric diff).
func CallStateOf(snap []byte) (CallState, error) {
	var s callSnap
	if err := json.Unmarshal(snap, &s); err != nil {
		return CallState{}, fmt.Errorf("decode call snapshot: %w", err)
	}
	return CallState{Ended: s.End != 0, EndedAt: fromMS(s.End)}, nil
}

// callFields are the tracked fields of a call for call.updated.
func callFields(c callcenter.Call) []field {
	var rec, transcription field
	if c.Recording != nil {
		r := *c.Recording
		transcription = optional("recording.transcription_url", r.TranscriptionURL)
		r.TranscriptionURL = nil // tracked on its own: absent in the earlier form
		rec = known("recording", r)
	} else {
		rec = known("recording", nil)
	}
	return []field{
		known("parent_call_id", c.ParentCallID),
		known("root_call_id", c.RootCallID),
		known("assigned_agent_id", c.AssignedAgentID),
		optional("assigned_agent_name", c.AssignedAgentName),
		known("assigned_team_id", c.AssignedTeamID),
		optional("assigned_team_name", c.AssignedTeamName),
		known("assigned_call_queue_id", c.AssignedCallQueueID),
		optional("assigned_call_queue_name", c.AssignedCallQueueName),
		known("assigned_ivr_id", c.AssignedIVRID),
		optional("assigned_ivr_name", c.AssignedIVRName),
		known("call_notes", c.CallNotes),
		known("bill_duration", c.BillDuration),
		rec,
		transcription,
		optional("recording_to_redact", c.RecordingToRedact),
		optionalSlice("integrated_resources", c.IntegratedResources),
		optionalSlice("parallel_call_groups", c.ParallelCallGroups),
	}
}
