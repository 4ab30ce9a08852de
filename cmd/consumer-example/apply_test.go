package main

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/callbus/callbus/events"
)

func customer(status int, at time.Time) events.Participant {
	return events.Participant{ID: 5001, CallID: 1000, ParticipantID: 304684, ParticipantType: events.ParticipantCustomer,
		CallStatus: status, CreatedTime: t0, UpdatedTime: at}
}

func agentLeg(status int, at time.Time) events.Participant {
	return events.Participant{ID: 5002, CallID: 1000, ParticipantID: 8, ParticipantType: events.ParticipantAgent,
		ConnectionType: 1, CallStatus: status, CreatedTime: at, UpdatedTime: at}
}

func call1000(ps ...events.Participant) events.Call {
	q := "Billing Queue"
	return events.Call{ID: 1000, Direction: events.DirectionIncoming, PhoneNumber: "+15550100",
		AssignedCallQueueName: &q, BillDuration: 95, BillDurationUnit: "seconds", CreatedTime: t0, UpdatedTime: t0,
		Participants: ps}
}

// decoded turns an envelope into the typed event a consumer would receive.
func decoded(t *testing.T, e events.Envelope) events.Event {
	t.Helper()
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := events.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// Events out of order, repeated or late leave the view as the latest state says;
// the outcome and the summary line of each say what happened.
func TestApplyCallsOutOfOrder(t *testing.T) {
	st := newStore(startRedis(t).Client(t), "apply", time.Hour)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	p1, c1 := "calls/1000/participants/5002", "calls/1000"
	steps := []struct {
		name string
		e    events.Envelope
		seq  uint64
		out  outcome
		line string
	}{
		{"joined before call.created", mustEvent(t, events.ParticipantJoined, p1, "1", at(2),
			events.ParticipantData{CallID: 1000, Participant: agentLeg(13, at(2))}), 2, applied, "call 1000: agent 8 joined (connecting)"},
		{"call.created comes late", mustEvent(t, events.CallCreated, c1, "1", at(1),
			events.CallData{Call: call1000(customer(13, at(1)))}), 1, applied, "call 1000 opened: incoming via Billing Queue"},
		{"a repeat is a duplicate", mustEvent(t, events.CallCreated, c1, "1", at(1),
			events.CallData{Call: call1000(customer(13, at(1)))}), 9, duplicate, ""},
		{"newer status", mustEvent(t, events.ParticipantStatusChanged, p1, "2", at(5),
			events.ParticipantStatusData{CallID: 1000, Participant: agentLeg(8, at(5))}), 5, applied, "call 1000: agent 8 connecting → in progress"},
		{"older status is superseded", mustEvent(t, events.ParticipantStatusChanged, p1, "3", at(4),
			events.ParticipantStatusData{CallID: 1000, Participant: agentLeg(12, at(4))}), 4, superseded, ""},
	}
	for _, s := range steps {
		out, line, err := st.commit(t.Context(), decoded(t, s.e), s.seq)
		if err != nil || out != s.out || line != s.line {
			t.Fatalf("%s: got %s %q %v; want %s %q", s.name, out, line, err, s.out, s.line)
		}
	}
	snap, err := st.snapshot(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Calls) != 1 || snap.Calls[0].Queue != "Billing Queue" || len(snap.Calls[0].Participants) != 1 ||
		snap.Calls[0].Participants[0].StatusLabel != "in progress" {
		t.Fatalf("state: %+v", snap.Calls)
	}
	ended := mustEvent(t, events.CallEnded, c1, "e", at(9), events.CallData{Call: call1000()})
	if out, line, err := st.commit(t.Context(), decoded(t, ended), 10); out != applied || line != "call 1000 ended: 0 participants, billed 95s" || err != nil {
		t.Fatalf("ended: %s %q %v", out, line, err)
	}
	late := mustEvent(t, events.ParticipantStatusChanged, p1, "4", at(12), events.ParticipantStatusData{CallID: 1000, Participant: agentLeg(1, at(12))})
	if out, _, err := st.commit(t.Context(), decoded(t, late), 11); out != superseded || err != nil {
		t.Fatalf("a late participant event: %s %v, want superseded (the call ended)", out, err)
	}
	team := mustEvent(t, events.TeamCreated, "teams/1", "c", at(9), events.TeamData{Team: events.Team{ID: 1, Users: []events.UserRef{}}})
	if out, _, err := st.commit(t.Context(), decoded(t, team), 12); out != ignored || err != nil {
		t.Fatalf("team: %s %v, want ignored", out, err)
	}
	if snap, err := st.snapshot(t.Context()); err != nil || len(snap.Calls) != 0 {
		t.Fatalf("calls left open: %+v %v", snap.Calls, err)
	}
}

// A deleted user leaves /state and an older event (earlier in the stream,
// handled late) does not bring it back.
func TestApplyUserDeleted(t *testing.T) {
	st := newStore(startRedis(t).Client(t), "users", time.Hour)
	evs := userEvents(t, 8, 2)
	del := mustEvent(t, events.UserDeleted, "users/8", "d", t0.Add(time.Hour), events.UserData{User: user(8, 0)})
	seqs := []uint64{1, 3, 2}
	for i, e := range []events.Envelope{evs[0], del, evs[1]} {
		if _, _, err := st.commit(t.Context(), decoded(t, e), seqs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if snap, err := st.snapshot(t.Context()); err != nil || len(snap.Agents) != 0 {
		t.Fatalf("agents after delete: %+v %v", snap.Agents, err)
	}
}

// A relay withdrawal seen from the consumer: it applied the entity's second
// event (seq 5) before the relay withdrew it to publish the lost first one (6)
// and the second again (7). The first, later in the stream, is applied; the
// second's copy is applied again in its new place, so the record ends as the
// stream's last event says; a redelivery of that copy, a resend while the record
// still holds it, or a copy earlier in the stream handled late, is a duplicate.
func TestApplyResendAfterWithdrawal(t *testing.T) {
	st := newStore(startRedis(t).Client(t), "withdrawal", time.Hour)
	evs := userEvents(t, 8, 3) // created, status 1, status 2
	for _, s := range []struct {
		e    events.Envelope
		seq  uint64
		want outcome
	}{
		{evs[0], 4, applied},
		{evs[2], 5, applied},   // read before the relay withdrew it
		{evs[1], 6, applied},   // the lost one, published again: later in the stream
		{evs[2], 7, applied},   // the withdrawn one again: its new place counts
		{evs[2], 7, duplicate}, // redelivered
		{evs[2], 9, duplicate}, // resent once more: the record holds it already
		{evs[1], 3, duplicate}, // a copy earlier in the stream, handled late
	} {
		out, _, err := st.commit(t.Context(), decoded(t, s.e), s.seq)
		if err != nil || out != s.want {
			t.Fatalf("%s at %d: %s %v, want %s", s.e.Type, s.seq, out, err, s.want)
		}
	}
	snap, err := st.snapshot(t.Context())
	if err != nil || len(snap.Agents) != 1 || snap.Agents[0].Status != 2 {
		t.Fatalf("agents %+v %v, want agent 8 at status 2", snap.Agents, err)
	}
}

// An event the relay published without its data (events.Meta.DataEmptied): a
// call.ended still ends the call its subject names; a user event is not applied.
func TestApplyDataEmptied(t *testing.T) {
	st := newStore(startRedis(t).Client(t), "emptied", time.Hour)
	created := mustEvent(t, events.CallCreated, "calls/1000", "1", t0, events.CallData{Call: call1000(customer(13, t0))})
	ended := mustEvent(t, events.CallEnded, "calls/1000", "2", t0.Add(time.Minute), events.CallData{})
	user := mustEvent(t, events.UserUpdated, "users/8", "1", t0, events.UserData{})
	for _, e := range []*events.Envelope{&ended, &user} {
		e.Data = []byte("{}")
	}
	emptied := func(e events.Envelope) events.Event {
		b, err := json.Marshal(map[string]any{"specversion": e.SpecVersion, "id": e.ID, "source": e.Source, "type": e.Type,
			"subject": e.Subject, "time": e.Time, "datacontenttype": e.DataContentType, "data": e.Data,
			"callbustruncated": "=1300000", "callbusoriginalsize": 1400000})
		if err != nil {
			t.Fatal(err)
		}
		ev, err := events.Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		return ev
	}
	for _, s := range []struct {
		ev   events.Event
		seq  uint64
		want outcome
	}{{decoded(t, created), 1, applied}, {emptied(ended), 2, applied}, {emptied(user), 3, ignored}} {
		if out, _, err := st.commit(t.Context(), s.ev, s.seq); err != nil || out != s.want {
			t.Fatalf("%s: %s %v, want %s", s.ev.Metadata().Type, out, err, s.want)
		}
	}
	snap, err := st.snapshot(t.Context())
	if err != nil || len(snap.Calls) != 0 || len(snap.Agents) != 0 {
		t.Fatalf("calls %+v agents %+v (%v): want none", snap.Calls, snap.Agents, err)
	}
}
