package audit

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/callbus/callbus/internal/event"
	"github.com/nats-io/nats.go/jetstream"
)

// Report is what Check found.
type Report struct {
	Messages int
	ByType   map[event.Type]int
	Problems []string

	// What the stream says happened, for CompareTruth.
	Created       map[int64]int     // call id → call.created count
	Ended         map[int64]int     // call id → call.ended count
	Finalized     map[int64]int     // call id → metric.finalized count
	Participants  map[int64]int     // participant id → its last published call_status
	UserState     map[int64][3]int  // user id → last published status, preference, mobile
	PartStatusSeq map[int64][]int   // participant id → published statuses in order
	UserCreated   map[int64]int     // user id → user.created count
	TeamCreated   map[int64]int     // team id → team.created count
	first         map[string]uint64 // event id → first sequence
	seenJoin      map[int64]bool
}

func (r *Report) problem(format string, args ...any) {
	if len(r.Problems) < 200 {
		r.Problems = append(r.Problems, fmt.Sprintf(format, args...))
	}
}

// OK reports whether no problem was found.
func (r *Report) OK() bool { return len(r.Problems) == 0 }

// Check audits messages published under prefix: valid envelopes and headers, the
// subject matching the type and account, unique ids, one call.created per call and
// at most one call.ended and metric.finalized, participants joined before they
// change, and unbroken status chains for participants and users.
func Check(msgs []Message, prefix string) *Report {
	r := &Report{
		ByType: map[event.Type]int{}, Created: map[int64]int{}, Ended: map[int64]int{}, Finalized: map[int64]int{},
		Participants: map[int64]int{}, UserState: map[int64][3]int{}, PartStatusSeq: map[int64][]int{},
		UserCreated: map[int64]int{}, TeamCreated: map[int64]int{}, first: map[string]uint64{}, seenJoin: map[int64]bool{},
	}
	for _, m := range msgs {
		r.Messages++
		if m.DecodeErr != nil {
			r.problem("seq %d: body is not an event: %v", m.Seq, m.DecodeErr)
			continue
		}
		e := m.Event
		if err := e.Validate(); err != nil {
			r.problem("seq %d: %v", m.Seq, err)
			continue
		}
		r.ByType[e.Type]++
		account := strings.TrimPrefix(e.Source, "urn:callbus:account:")
		if want := event.Subject(prefix, account, e.Type); m.Subject != want {
			r.problem("seq %d: subject %s, want %s", m.Seq, m.Subject, want)
		}
		if got := m.Header.Get(jetstream.MsgIDHeader); got != e.ID {
			r.problem("seq %d: Nats-Msg-Id %q differs from id %q", m.Seq, got, e.ID)
		}
		if ct := m.Header.Get("Content-Type"); ct != event.ContentType {
			r.problem("seq %d: Content-Type %q", m.Seq, ct)
		}
		if s, dup := r.first[e.ID]; dup {
			r.problem("seq %d: id %s already published at seq %d (%s %s)", m.Seq, e.ID, s, e.Type, e.Subject)
			continue
		}
		r.first[e.ID] = m.Seq
		if err := r.apply(e); err != nil {
			r.problem("seq %d: %s %s: %v", m.Seq, e.Type, e.Subject, err)
		}
	}
	for id, n := range r.Created {
		if n != 1 {
			r.problem("call %d: %d call.created events, want 1", id, n)
		}
	}
	for id, n := range r.Ended {
		if n > 1 {
			r.problem("call %d: %d call.ended events, want 1", id, n)
		}
	}
	for id, n := range r.Finalized {
		if n > 1 {
			r.problem("call %d: %d metric.finalized events, want 1", id, n)
		}
	}
	for id, n := range r.UserCreated {
		if n > 1 {
			r.problem("user %d: %d user.created events", id, n)
		}
	}
	for id, n := range r.TeamCreated {
		if n > 1 {
			r.problem("team %d: %d team.created events", id, n)
		}
	}
	return r
}

// apply records one event and checks its chain.
func (r *Report) apply(e event.Envelope) error {
	switch e.Type {
	case event.CallCreated, event.CallEnded:
		var d event.CallData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return err
		}
		if e.Type == event.CallCreated {
			r.Created[d.Call.ID]++
		} else {
			if r.Created[d.Call.ID] == 0 {
				return fmt.Errorf("ended before created")
			}
			r.Ended[d.Call.ID]++
		}
	case event.ParticipantJoined:
		var d event.ParticipantData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return err
		}
		p := d.Participant
		if r.seenJoin[p.ID] {
			return fmt.Errorf("participant %d joined twice", p.ID)
		}
		if r.Created[d.CallID] == 0 {
			return fmt.Errorf("participant joined before call.created")
		}
		r.seenJoin[p.ID] = true
		r.Participants[p.ID] = p.CallStatus
		r.PartStatusSeq[p.ID] = append(r.PartStatusSeq[p.ID], p.CallStatus)
	case event.ParticipantStatusChanged:
		var d event.ParticipantStatusData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return err
		}
		id := d.Participant.ID
		if !r.seenJoin[id] {
			return fmt.Errorf("participant %d changed before it joined", id)
		}
		if last := r.Participants[id]; d.Previous.Code != last {
			return fmt.Errorf("chain broken: previous %d, last published %d", d.Previous.Code, last)
		}
		if d.Current.Code != d.Participant.CallStatus {
			return fmt.Errorf("current %d differs from the participant's call_status %d", d.Current.Code, d.Participant.CallStatus)
		}
		r.Participants[id] = d.Current.Code
		r.PartStatusSeq[id] = append(r.PartStatusSeq[id], d.Current.Code)
	case event.UserCreated:
		var d event.UserData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return err
		}
		r.UserCreated[d.User.ID]++
		r.UserState[d.User.ID] = [3]int{d.User.Status, d.User.Preference, d.User.MobileAppPreference}
	case event.UserStatusChanged:
		var d event.UserStatusData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return err
		}
		last, ok := r.UserState[d.User.ID]
		if !ok {
			return fmt.Errorf("user %d changed status before user.created", d.User.ID)
		}
		prev := [3]int{d.Previous.Status, d.Previous.Preference, d.Previous.MobileAppPreference}
		if prev != last {
			return fmt.Errorf("chain broken: previous %v, last published %v", prev, last)
		}
		r.UserState[d.User.ID] = [3]int{d.Current.Status, d.Current.Preference, d.Current.MobileAppPreference}
	case event.TeamCreated:
		var d event.TeamData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return err
		}
		r.TeamCreated[d.Team.ID]++
	case event.MetricFinalized:
		var d event.MetricData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return err
		}
		if r.Ended[d.CallID] == 0 {
			return fmt.Errorf("metric finalized before call.ended")
		}
		r.Finalized[d.CallID]++
	}
	return nil
}
