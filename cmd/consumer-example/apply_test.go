package main

import (
	"testing"
	"time"

	"github.com/callbus/callbus/internal/event"
)

// Events out of order, repeated or late leave the view as the latest state says.
func TestApplyOutOfOrder(t *testing.T) {
	v := newView()
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	steps := []struct {
		name string
		e    event.Envelope
		line string
	}{
		{"joined before call.created opens the call", mustEvent(t, event.ParticipantJoined, "p", "1", at(2),
			event.ParticipantData{CallID: 1000, Participant: agentLeg(13, at(2))}), "call 1000: agent 8 joined (connecting)"},
		{"call.created fills it in", mustEvent(t, event.CallCreated, "c", "1", at(1),
			event.CallData{Call: call1000(customer(13, at(1)))}), "call 1000 opened: incoming via Billing Queue, 2 participants"},
		{"repeat", mustEvent(t, event.CallCreated, "c", "1", at(1),
			event.CallData{Call: call1000(customer(13, at(1)))}), ""},
		{"newer status", mustEvent(t, event.ParticipantStatusChanged, "p", "2", at(5),
			event.ParticipantStatusData{CallID: 1000, Participant: agentLeg(8, at(5))}), "call 1000: agent 8 connecting → in progress"},
		{"older status is ignored", mustEvent(t, event.ParticipantStatusChanged, "p", "3", at(4),
			event.ParticipantStatusData{CallID: 1000, Participant: agentLeg(12, at(4))}), ""},
		{"ended", mustEvent(t, event.CallEnded, "c", "e", at(9), event.CallData{Call: call1000()}), "call 1000 ended: 0 participants, billed 95s"},
		{"late event does not reopen", mustEvent(t, event.ParticipantStatusChanged, "p", "4", at(7),
			event.ParticipantStatusData{CallID: 1000, Participant: agentLeg(1, at(7))}), ""},
		{"teams are ignored", mustEvent(t, event.TeamCreated, "teams/1", "c", at(9), event.TeamData{}), ""},
	}
	for _, s := range steps {
		line, err := v.apply(s.e)
		if err != nil || line != s.line {
			t.Fatalf("%s: got %q, %v; want %q", s.name, line, err, s.line)
		}
	}
	if snap := v.snapshot(); len(snap.Calls) != 0 {
		t.Fatalf("calls left open: %+v", snap.Calls)
	}
}
