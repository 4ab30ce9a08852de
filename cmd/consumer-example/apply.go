package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/callbus/callbus/internal/callcenter"
	"github.com/callbus/callbus/internal/event"
)

// endedMemory is how long an ended call is remembered to ignore its late events.
const endedMemory = 24 * time.Hour

// handler is the example's handlerFunc: apply the event to v and print one
// summary line per change to out (best effort: the line is not the state).
func handler(v *view, out io.Writer) handlerFunc {
	return func(_ context.Context, e event.Envelope) error {
		line, err := v.apply(e)
		if err == nil && line != "" {
			_, _ = fmt.Fprintf(out, "%s  %s\n", e.Time.Format(time.TimeOnly), line)
		}
		return err
	}
}

// apply changes the view by one event and describes the change; "" when the
// event changes nothing (a repeat, an older event, or a type the view ignores).
// An event whose data does not decode is poison.
func (v *view) apply(e event.Envelope) (string, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	switch e.Type {
	case event.UserCreated, event.UserUpdated, event.UserDeleted:
		var d event.UserData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return "", poison(fmt.Errorf("%s data: %w", e.Type, err))
		}
		return v.user(e, d), nil
	case event.UserStatusChanged:
		var d event.UserStatusData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return "", poison(fmt.Errorf("%s data: %w", e.Type, err))
		}
		return v.userStatus(e, d), nil
	case event.CallCreated, event.CallUpdated, event.CallEnded:
		var d event.CallData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return "", poison(fmt.Errorf("%s data: %w", e.Type, err))
		}
		return v.call(e, d.Call), nil
	case event.ParticipantJoined, event.ParticipantStatusChanged:
		var d event.ParticipantStatusData // joined has the same call_id and participant
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return "", poison(fmt.Errorf("%s data: %w", e.Type, err))
		}
		return v.participant(e, d), nil
	}
	return "", nil // teams and metrics are not part of this view
}

func (v *view) user(e event.Envelope, d event.UserData) string {
	u := d.User
	a := v.agents[u.ID]
	if a != nil && e.Time.Before(a.Updated) {
		return ""
	}
	if e.Type == event.UserDeleted || u.Deleted {
		if a == nil {
			return ""
		}
		delete(v.agents, u.ID)
		return fmt.Sprintf("agent %d %s deleted", u.ID, u.Name)
	}
	next := agent{ID: u.ID, Name: u.Name, Role: u.Role, Status: u.Status, StatusName: userStatusName(u.Status, ""), Preference: u.Preference, Updated: e.Time}
	if a != nil && a.Preference == u.Preference {
		next.PreferenceName = a.PreferenceName // user events carry no status names; keep the known one
	}
	if a != nil && a.Status == u.Status {
		next.StatusName = a.StatusName
	}
	if a != nil && sameAgent(*a, next) {
		return ""
	}
	v.agents[u.ID] = &next
	if a == nil {
		return fmt.Sprintf("agent %d %s (%s): %s", u.ID, u.Name, u.Role, next.StatusName)
	}
	return fmt.Sprintf("agent %d %s updated", u.ID, u.Name)
}

func (v *view) userStatus(e event.Envelope, d event.UserStatusData) string {
	u, cur := d.User, d.Current
	a := v.agents[u.ID]
	if a != nil && e.Time.Before(a.Updated) {
		return ""
	}
	next := agent{ID: u.ID, Name: u.Name, Role: u.Role, Status: cur.Status, StatusName: userStatusName(cur.Status, cur.StatusName),
		Preference: cur.Preference, PreferenceName: cur.PreferenceName, Updated: e.Time}
	if a != nil && sameAgent(*a, next) {
		return ""
	}
	v.agents[u.ID] = &next
	prev := userStatusName(d.Previous.Status, d.Previous.StatusName)
	return fmt.Sprintf("agent %d %s: %s → %s", u.ID, u.Name, prev, next.StatusName)
}

func (v *view) call(e event.Envelope, c callcenter.Call) string {
	if _, ended := v.ended[c.ID]; ended {
		return ""
	}
	if e.Type == event.CallEnded {
		v.ended[c.ID] = e.Time
		v.forgetEnded(e.Time)
		delete(v.calls, c.ID)
		return fmt.Sprintf("call %d ended: %d participants, billed %ds", c.ID, len(c.Participants), c.BillDuration)
	}
	cur := v.calls[c.ID]
	if cur != nil && e.Time.Before(cur.Updated) {
		return ""
	}
	next := &call{ID: c.ID, Direction: string(c.Direction), Queue: deref(c.AssignedCallQueueName), Agent: deref(c.AssignedAgentName),
		Created: c.CreatedTime, Participants: map[int64]*participant{}, Updated: e.Time}
	changed := cur == nil || !sameCall(*cur, *next)
	if cur != nil {
		next.Participants = cur.Participants
	}
	for _, p := range c.Participants { // the call's own list fills in participants we missed
		old := next.Participants[p.ID]
		if old == nil || (!e.Time.Before(old.Updated) && old.Status != p.CallStatus) {
			next.Participants[p.ID] = newParticipant(p, e.Time)
			changed = true
		}
	}
	if !changed {
		return ""
	}
	v.calls[c.ID] = next
	if e.Type == event.CallCreated {
		s := fmt.Sprintf("call %d opened: %s", c.ID, next.Direction)
		if next.Queue != "" {
			s += " via " + next.Queue
		}
		return fmt.Sprintf("%s, %d participants", s, len(next.Participants))
	}
	return fmt.Sprintf("call %d updated: queue %q, agent %q", c.ID, next.Queue, next.Agent)
}

func (v *view) participant(e event.Envelope, d event.ParticipantStatusData) string {
	if _, ended := v.ended[d.CallID]; ended {
		return ""
	}
	c := v.calls[d.CallID]
	if c == nil { // its call.created is late or lost: open the call with what we know
		c = &call{ID: d.CallID, Participants: map[int64]*participant{}} // call fields unknown: any call event is newer
		v.calls[d.CallID] = c
	}
	old := c.Participants[d.Participant.ID]
	if old != nil && (e.Time.Before(old.Updated) || old.Status == d.Participant.CallStatus) {
		return ""
	}
	p := newParticipant(d.Participant, e.Time)
	c.Participants[p.ID] = p
	who := fmt.Sprintf("%s %d", p.Type, p.ParticipantID)
	if old == nil {
		return fmt.Sprintf("call %d: %s joined (%s)", c.ID, who, p.StatusLabel)
	}
	return fmt.Sprintf("call %d: %s %s → %s", c.ID, who, old.StatusLabel, p.StatusLabel)
}

// forgetEnded drops ended calls older than endedMemory: their events no longer arrive.
func (v *view) forgetEnded(now time.Time) {
	for id, at := range v.ended {
		if now.Sub(at) > endedMemory {
			delete(v.ended, id)
		}
	}
}

func newParticipant(p callcenter.Participant, at time.Time) *participant {
	return &participant{ID: p.ID, Type: strings.ToLower(p.ParticipantType), ParticipantID: p.ParticipantID,
		Status: p.CallStatus, StatusLabel: callcenter.CallStatusLabel(p.CallStatus), Updated: at}
}

func sameAgent(a, b agent) bool { a.Updated = b.Updated; return a == b }

func sameCall(a, b call) bool {
	return a.Direction == b.Direction && a.Queue == b.Queue && a.Agent == b.Agent && a.Created.Equal(b.Created)
}

// userStatusName is the name the event gives, or the name of the built-in status.
func userStatusName(status int, name string) string {
	if name != "" {
		return name
	}
	switch status {
	case callcenter.UserOffline:
		return "Offline"
	case callcenter.UserOnline:
		return "Online"
	case callcenter.UserBusy:
		return "Busy"
	case callcenter.UserAfterCallWork:
		return "After-call work"
	}
	return fmt.Sprintf("status %d", status)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
