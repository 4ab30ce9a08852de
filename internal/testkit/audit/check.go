package audit

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/event"
	"github.com/nats-io/nats.go/jetstream"
)

// Delivery is how often a stream may announce one change.
type Delivery int

const (
	// ExactlyOnce: every change once. What callbus promises while its state store
	// keeps its data (crashes, restarts, leader changes).
	ExactlyOnce Delivery = iota
	// AtLeastOnce: a change may be announced again, under a new id, after the state
	// store lost its data and a new epoch re-derived the world from scratch; a
	// re-announced entity starts its chain again (call.created, participant.joined,
	// user.created). Ids are still never reused.
	AtLeastOnce
)

// Report is what Check found.
type Report struct {
	Messages int
	ByType   map[events.Type]int
	Problems []string
	Delivery Delivery

	// What the stream says happened, for CompareTruth.
	Created       map[int64]int     // call id → call.created count
	Ended         map[int64]int     // call id → call.ended count
	Finalized     map[int64]int     // call id → metric.finalized count
	Participants  map[int64]int     // participant id → its last published call_status
	UserState     map[int64][3]int  // user id → last published status, preference, mobile
	PartStatusSeq map[int64][]int   // participant id → published statuses in stream order
	UserFieldSeq  map[string][]int  // "<user id>:<field>" → values status changes published, in order
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

// Check audits messages published under prefix for exactly-once delivery:
// CheckDelivery(msgs, prefix, ExactlyOnce).
func Check(msgs []Message, prefix string) *Report { return CheckDelivery(msgs, prefix, ExactlyOnce) }

// CheckDelivery audits messages published under prefix: valid envelopes and
// headers, the subject matching the type and account, unique ids, a call.created
// before anything else about a call, participants joined before they change, metrics
// finalized after their call ended, and unbroken status chains for participants and
// users. With ExactlyOnce it also wants one call.created per call and at most one
// call.ended, metric.finalized, participant.joined, user.created and team.created
// per entity.
func CheckDelivery(msgs []Message, prefix string, d Delivery) *Report {
	r := &Report{
		ByType: map[events.Type]int{}, Delivery: d, Created: map[int64]int{}, Ended: map[int64]int{}, Finalized: map[int64]int{},
		Participants: map[int64]int{}, UserState: map[int64][3]int{}, PartStatusSeq: map[int64][]int{}, UserFieldSeq: map[string][]int{},
		UserCreated: map[int64]int{}, TeamCreated: map[int64]int{}, first: map[string]uint64{}, seenJoin: map[int64]bool{},
	}
	for _, m := range msgs {
		r.message(m, prefix)
	}
	if d == ExactlyOnce {
		r.counts()
	}
	return r
}

// message checks one message and applies its event.
func (r *Report) message(m Message, prefix string) {
	r.Messages++
	if m.DecodeErr != nil {
		r.problem("seq %d: body is not an event: %v", m.Seq, m.DecodeErr)
		return
	}
	e := m.Event
	if err := e.Validate(); err != nil {
		r.problem("seq %d: %v", m.Seq, err)
		return
	}
	r.ByType[e.Type]++
	account := strings.TrimPrefix(e.Source, events.Source(""))
	if want := events.Subject(prefix, account, e.Type); m.Subject != want {
		r.problem("seq %d: subject %s, want %s", m.Seq, m.Subject, want)
	}
	// The relay publishes an event it withdrew under a message id of its own
	// (event.MsgID); the event's id is the one that must be unique.
	if got := m.Header.Get(jetstream.MsgIDHeader); !event.IsMsgIDOf(got, e.ID) {
		r.problem("seq %d: Nats-Msg-Id %q differs from id %q", m.Seq, got, e.ID)
	}
	if ct := m.Header.Get("Content-Type"); ct != events.ContentType {
		r.problem("seq %d: Content-Type %q", m.Seq, ct)
	}
	if s, dup := r.first[e.ID]; dup {
		r.problem("seq %d: id %s already published at seq %d (%s %s)", m.Seq, e.ID, s, e.Type, e.Subject)
		return
	}
	r.first[e.ID] = m.Seq
	if err := r.apply(e); err != nil {
		r.problem("seq %d: %s %s: %v", m.Seq, e.Type, e.Subject, err)
	}
}

// counts reports entities announced more often than exactly-once delivery allows.
func (r *Report) counts() {
	for _, c := range []struct {
		what, entity string
		n            map[int64]int
	}{
		{"call.created", "call", r.Created},
		{"call.ended", "call", r.Ended},
		{"metric.finalized", "call", r.Finalized},
		{"user.created", "user", r.UserCreated},
		{"team.created", "team", r.TeamCreated},
	} {
		for _, id := range slices.Sorted(maps.Keys(c.n)) {
			if n := c.n[id]; n > 1 {
				r.problem("%s %d: %d %s events, want 1", c.entity, id, n, c.what)
			}
		}
	}
}

// apply records one event and checks its place in its entity's life. It records
// the event even when it reports a problem, so one broken link is one problem,
// not one per later event.
func (r *Report) apply(e events.Envelope) error {
	switch e.Type {
	case events.CallCreated, events.CallEnded, events.MetricFinalized, events.TeamCreated:
		return r.applyCount(e)
	case events.ParticipantJoined:
		var d events.ParticipantData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return err
		}
		p := d.Participant
		var err error
		if r.seenJoin[p.ID] && r.Delivery == ExactlyOnce {
			err = fmt.Errorf("participant %d joined twice", p.ID)
		}
		if r.Created[d.CallID] == 0 {
			err = fmt.Errorf("participant joined before call.created")
		}
		r.seenJoin[p.ID] = true
		r.participant(p.ID, p.CallStatus)
		return err
	case events.ParticipantStatusChanged:
		var d events.ParticipantStatusData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return err
		}
		id := d.Participant.ID
		var err error
		switch last := r.Participants[id]; {
		case !r.seenJoin[id]:
			err = fmt.Errorf("participant %d changed before it joined", id)
		case d.Previous.Code != last:
			err = fmt.Errorf("chain broken: previous %d, last published %d", d.Previous.Code, last)
		case d.Current.Code != d.Participant.CallStatus:
			err = fmt.Errorf("current %d differs from the participant's call_status %d", d.Current.Code, d.Participant.CallStatus)
		}
		r.participant(id, d.Current.Code)
		return err
	case events.UserCreated:
		var d events.UserData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return err
		}
		r.UserCreated[d.User.ID]++
		r.UserState[d.User.ID] = [3]int{d.User.Status, d.User.Preference, d.User.MobileAppPreference}
	case events.UserStatusChanged:
		return r.applyUserStatus(e)
	}
	return nil
}

// participant records a published call_status.
func (r *Report) participant(id int64, status int) {
	r.Participants[id] = status
	r.PartStatusSeq[id] = append(r.PartStatusSeq[id], status)
}

// applyCount counts the events that happen once per entity.
func (r *Report) applyCount(e events.Envelope) error {
	switch e.Type {
	case events.TeamCreated:
		var d events.TeamData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return err
		}
		r.TeamCreated[d.Team.ID]++
	case events.MetricFinalized:
		var d events.MetricData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return err
		}
		r.Finalized[d.CallID]++
		if r.Ended[d.CallID] == 0 {
			return fmt.Errorf("metric finalized before call.ended")
		}
	default:
		var d events.CallData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return err
		}
		if e.Type == events.CallCreated {
			r.Created[d.Call.ID]++
			return nil
		}
		r.Ended[d.Call.ID]++
		if r.Created[d.Call.ID] == 0 {
			return fmt.Errorf("ended before created")
		}
	}
	return nil
}

// userFields are the status fields of user.status_changed, in UserState's order.
var userFields = [3]string{"status", "preference", "mobile_app_preference"}

func userFieldKey(id int64, field string) string { return fmt.Sprintf("%d:%s", id, field) }

// applyUserStatus checks a user.status_changed against the user's last published
// state and records the values of the fields it changed.
func (r *Report) applyUserStatus(e events.Envelope) error {
	var d events.UserStatusData
	if err := json.Unmarshal(e.Data, &d); err != nil {
		return err
	}
	id := d.User.ID
	prev := [3]int{d.Previous.Status, d.Previous.Preference, d.Previous.MobileAppPreference}
	cur := [3]int{d.Current.Status, d.Current.Preference, d.Current.MobileAppPreference}
	var err error
	if last, ok := r.UserState[id]; !ok {
		err = fmt.Errorf("user %d changed status before user.created", id)
	} else if prev != last {
		err = fmt.Errorf("chain broken: previous %v, last published %v", prev, last)
	}
	r.UserState[id] = cur
	for i, f := range userFields {
		if prev[i] != cur[i] {
			k := userFieldKey(id, f)
			r.UserFieldSeq[k] = append(r.UserFieldSeq[k], cur[i])
		}
	}
	return err
}
