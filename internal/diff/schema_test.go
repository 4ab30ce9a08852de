package diff

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/schemas"
)

// The helpers of this file carry a schema prefix so they do not collide with the
// other tests of the package.

var schemaT0 = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

func schemaAt(sec int) time.Time { return schemaT0.Add(time.Duration(sec) * time.Second) }

func schemaPtr[T any](v T) *T { return &v }

func schemaPart(id int64, status, upd int, customer bool) events.Participant {
	p := events.Participant{ID: id, CallID: 1, ParticipantID: 7, ParticipantType: events.ParticipantAgent, ConnectionType: 1,
		CallStatus: status, Duration: int64(upd), DurationUnit: "seconds", CostUnit: "USD",
		CreatedTime: schemaAt(0), UpdatedTime: schemaAt(upd)}
	if customer {
		p.ParticipantID, p.ParticipantType, p.ConnectionType = 12, events.ParticipantCustomer, 0
		p.CallerID, p.CallerNumber, p.CallerName = schemaPtr(int64(12)), schemaPtr("+15550111"), schemaPtr("Bob")
		p.EnqueuedTime, p.Cost = schemaPtr(schemaAt(1)), schemaPtr(0.25)
	}
	return p
}

// schemaCalls are observations of three calls: one that goes through every
// tracked change, one first seen in the earlier form and already ended, and an
// outgoing call with every nullable field null.
func schemaCalls() [][]events.Call {
	base := func(upd int, parts ...events.Participant) events.Call {
		return events.Call{ID: 1, Direction: events.DirectionIncoming, PhoneNumberID: 3, PhoneNumber: "+15550100",
			AssignedAgentID: schemaPtr(int64(7)), AssignedAgentName: schemaPtr("Ann"), AssignedTeamID: schemaPtr(int64(2)),
			AssignedTeamName: schemaPtr("Sales"), AssignedCallQueueID: schemaPtr(int64(4)), AssignedCallQueueName: schemaPtr("Main"),
			BillDurationUnit: "seconds", CreatedTime: schemaAt(0), UpdatedTime: schemaAt(upd),
			IntegratedResources: []events.IntegratedResource{}, ParallelCallGroups: []json.RawMessage{}, Participants: parts}
	}
	ringing := base(0, schemaPart(10, 13, 0, true), schemaPart(11, 6, 0, false))
	talking := base(5, schemaPart(10, 8, 5, true), schemaPart(11, 8, 5, false))
	talking.CallNotes = "callback tomorrow"
	talking.AssignedAgentID, talking.AssignedAgentName = schemaPtr(int64(8)), schemaPtr("Bea")
	talking.ParentCallID, talking.RootCallID = schemaPtr(int64(0)), schemaPtr(int64(1))
	talking.AssignedIVRID, talking.AssignedIVRName = schemaPtr(int64(5)), schemaPtr("Menu")
	ended := talking
	ended.UpdatedTime = schemaAt(30)
	ended.Participants = []events.Participant{schemaPart(10, 1, 30, true), schemaPart(11, 1, 30, false)}
	recorded := ended
	recorded.UpdatedTime, recorded.BillDuration = schemaAt(40), 30
	recorded.Recording = &events.Recording{ID: 99, URL: "https://api.example/recordings/99", Duration: 30, DurationUnit: "seconds"}
	recorded.RecordingToRedact = &events.RecordingToRedact{ID: 98, URL: "https://api.example/r/98", Duration: 30, DurationUnit: "seconds"}
	recorded.IntegratedResources = []events.IntegratedResource{{ID: 1, IntegrationName: "helpdesk", Type: "ticket"}}
	recorded.ParallelCallGroups = []json.RawMessage{json.RawMessage(`{"id":3}`)}
	transcribed := recorded
	transcribed.UpdatedTime = schemaAt(50)
	transcribed.Recording = &events.Recording{ID: 99, URL: "https://api.example/recordings/99", TranscriptionURL: schemaPtr("https://api.example/t/99"), Duration: 30, DurationUnit: "seconds"}
	transcribed.AssignedAgentID, transcribed.AssignedAgentName = nil, nil

	earlier := events.Call{ID: 2, Direction: events.DirectionIncoming, CreatedTime: schemaAt(0), UpdatedTime: schemaAt(9),
		AssignedAgentID: schemaPtr(int64(7)),
		Participants:    []events.Participant{schemaPart(20, 17, 9, true)}}
	earlier.Participants[0].CallerName = nil
	outgoing := events.Call{ID: 3, Direction: events.DirectionOutgoing, CreatedTime: schemaAt(0), UpdatedTime: schemaAt(0)}
	outgoingLater := outgoing
	outgoingLater.UpdatedTime, outgoingLater.CallNotes = schemaAt(3), "no answer"
	return [][]events.Call{{ringing, talking, ended, recorded, transcribed}, {earlier}, {outgoing, outgoingLater}}
}

// schemaMetrics are observations of the metrics of ended calls: a rich one that
// changes after it is final, and one with every nullable field null and no life
// cycle.
func schemaMetrics() [][]events.CallMetric {
	rich := events.CallMetric{ID: 5, CallID: 1, CreatedTime: schemaAt(0), UpdatedTime: schemaAt(60),
		IVRTime: 3, IVRTimeUnit: "seconds", HoldDuration: 4, HoldDurationUnit: "seconds", CallWorkTime: 5, CallWorkTimeUnit: "seconds",
		TotalRingingTime: schemaPtr(int64(6)), TotalRingingTimeUnit: "seconds", TalkTime: 30, TalkTimeUnit: "seconds",
		AnsweringSpeed: schemaPtr(int64(2)), AnsweringSpeedUnit: "seconds", RecordingDuration: 30, RecordingDurationUnit: "seconds",
		BillDuration: schemaPtr(int64(42)), BillDurationUnit: "seconds", Cost: schemaPtr(1.5), CostUnit: "USD",
		Csat: &events.Csat{TimeUnit: "seconds"},
		Tags: []events.Tag{{Raw: json.RawMessage(`"interested"`)}},
		LifeCycle: []events.LifeCycleEvent{
			{Type: "enqueued", QueueID: schemaPtr(int64(4)), ID: 7, LegType: 1, Timestamp: schemaAt(1)},
			{Type: "answered", ID: 7, LegType: 1, Timestamp: schemaAt(5)},
			{Type: "hangup", ID: 7, LegType: 1, Timestamp: schemaAt(30)},
		}}
	rated := rich
	rated.UpdatedTime = schemaAt(90)
	rated.Csat = &events.Csat{TransferMade: true, Outcome: json.RawMessage(`{"score":5}`), Time: 12, TimeUnit: "seconds"}
	rated.Tags = []events.Tag{{Raw: json.RawMessage(`"interested"`)}, {Raw: json.RawMessage(`{"name":"follow up"}`)}}
	rated.Cost = schemaPtr(1.75)
	untagged := rated
	untagged.UpdatedTime, untagged.Tags, untagged.Csat, untagged.Cost = schemaAt(120), nil, nil, nil
	sparse := events.CallMetric{ID: 6, CallID: 2, CreatedTime: schemaAt(0), UpdatedTime: schemaAt(60)}
	return [][]events.CallMetric{{rich, rated, untagged}, {sparse}}
}

func schemaUsers() []events.User {
	u := events.User{ID: 3, Name: "Ann", Email: "ann@example.com", Phone: "+15550102", Status: 1, Preference: 1,
		MobileAppPreference: 1, LastCallTime: schemaPtr(schemaAt(0)), LastSeenTime: schemaPtr(schemaAt(1)), Confirmed: true,
		Language: schemaPtr("en"), TimeZone: "Europe/Paris", Role: events.RoleAgent, Teams: []events.TeamRef{{ID: 2}}}
	busy := u
	busy.Status = 2
	lunch := u
	lunch.Status, lunch.Preference, lunch.MobileAppPreference = 0, 7, 99 // 99: not a known status
	promoted := lunch
	promoted.Role, promoted.Teams, promoted.Language = events.RoleSupervisor, nil, nil
	deleted := promoted
	deleted.Deleted, deleted.Email = true, "gone@example.com"
	undeleted := deleted
	undeleted.Deleted = false
	return []events.User{u, busy, lunch, promoted, deleted, undeleted}
}

func schemaTeams() []events.Team {
	t := events.Team{ID: 2, Name: "Sales", Users: []events.UserRef{{ID: 1}, {ID: 2}}}
	moved := t
	moved.Users = []events.UserRef{{ID: 2}, {ID: 3}}
	renamed := moved
	renamed.Name, renamed.Description, renamed.OmniChannel = "Sales EU", "Europe", true
	emptied := renamed
	emptied.Users = nil
	return []events.Team{t, moved, renamed, emptied}
}

// TestEventsMatchSchemas runs every diff over rich observations and validates each
// event it produces against the published schemas.
func TestEventsMatchSchemas(t *testing.T) {
	v, err := schemas.New()
	if err != nil {
		t.Fatal(err)
	}
	var evs []events.Envelope
	states := map[int64]CallState{}
	for _, obs := range schemaCalls() {
		var snap []byte
		for _, c := range obs {
			r, err := Call(Scope{Account: "acme"}, snap, c, c.UpdatedTime.Add(time.Second))
			if err != nil {
				t.Fatal(err)
			}
			evs, snap, states[c.ID] = append(evs, r.Events...), r.Snap, r.State
		}
	}
	for _, obs := range schemaMetrics() {
		var snap []byte
		for _, m := range obs {
			r, err := Metric(Scope{Account: "acme"}, snap, m, states[m.CallID])
			if err != nil {
				t.Fatal(err)
			}
			evs, snap = append(evs, r.Events...), r.Snap
		}
	}
	var names StatusNames
	names.Add(0, "offline", "Offline")
	names.Add(1, "online", "Online")
	names.Add(2, "busy", "Busy")
	names.Add(7, "offline", "Lunch")
	var snap []byte
	for i, u := range schemaUsers() {
		r, err := User(Scope{Account: "acme"}, snap, u, names, schemaAt(i))
		if err != nil {
			t.Fatal(err)
		}
		evs, snap = append(evs, r.Events...), r.Snap
	}
	sparseUser, err := User(Scope{Account: "acme"}, nil, events.User{ID: 4}, names, schemaAt(0))
	if err != nil {
		t.Fatal(err)
	}
	evs = append(evs, sparseUser.Events...)
	snap = nil
	for i, tm := range schemaTeams() {
		r, err := Team(Scope{Account: "acme"}, snap, tm, schemaAt(i))
		if err != nil {
			t.Fatal(err)
		}
		evs, snap = append(evs, r.Events...), r.Snap
	}

	seen := map[events.Type]int{}
	for _, e := range evs {
		seen[e.Type]++
		body, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		if err := v.Validate(body); err != nil {
			t.Errorf("%v\nbody: %s", err, body)
		}
	}
	for _, i := range events.Catalog {
		if seen[i.Type] == 0 && !notFromDiff[i.Type] {
			t.Errorf("the inputs produced no %s event: extend them", i.Type)
		}
	}
	t.Logf("validated %d events: %v", len(evs), seen)
}

// TestAPISamplesMatchSchemas runs the diffs over the API client's decoding fixtures
// (the spec's samples and the drift seen in the wild, decoded tolerantly) and
// validates the events.
func TestAPISamplesMatchSchemas(t *testing.T) {
	v, err := schemas.New()
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("../callcenter/testdata/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures in ../callcenter/testdata: %v", err)
	}
	var evs []events.Envelope
	add := func(name string, r []events.Envelope, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		evs = append(evs, r...)
	}
	decode := func(name string, into any) {
		t.Helper()
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, into); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	n := 0
	for _, f := range files {
		base := strings.TrimSuffix(filepath.Base(f), ".json")
		switch {
		case base == "call" || (strings.HasPrefix(base, "call_") && !strings.HasPrefix(base, "call_metric")):
			var c events.Call
			decode(f, &c)
			r, err := Call(Scope{Account: "acme"}, nil, c, c.UpdatedTime.Add(time.Second))
			add(base, r.Events, err)
		case base == "call_metric" || strings.HasPrefix(base, "call_metric_"):
			var m events.CallMetric
			decode(f, &m)
			r, err := Metric(Scope{Account: "acme"}, nil, m, CallState{Ended: true, EndedAt: m.UpdatedTime.Add(-time.Second)})
			add(base, r.Events, err)
		case base == "user" || base == "user_drift":
			var u events.User
			decode(f, &u)
			r, err := User(Scope{Account: "acme"}, nil, u, StatusNames{}, schemaAt(0))
			add(base, r.Events, err)
			u.Status, u.Role = u.Status+1, "Admin"
			r2, err := User(Scope{Account: "acme"}, r.Snap, u, StatusNames{}, schemaAt(1))
			add(base, r2.Events, err)
		case base == "team":
			var tm events.Team
			decode(f, &tm)
			r, err := Team(Scope{Account: "acme"}, nil, tm, schemaAt(0))
			add(base, r.Events, err)
		default:
			continue
		}
		n++
	}
	if n < 5 {
		t.Fatalf("only %d fixtures used: have they moved?", n)
	}
	for _, e := range evs {
		body, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		if err := v.Validate(body); err != nil {
			t.Errorf("%v\nbody: %s", err, body)
		}
	}
	t.Logf("validated %d events from %d fixtures", len(evs), n)
}
