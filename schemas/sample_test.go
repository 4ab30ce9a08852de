package schemas

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/callcenter"
	"github.com/callbus/callbus/internal/event"
)

var sampleTime = time.Date(2026, 11, 21, 10, 0, 3, 0, time.UTC)

func ptr[T any](v T) *T { return &v }

// richCall has every nullable field set, recordings and participants.
func richCall() callcenter.Call {
	return callcenter.Call{
		ID: 812, Direction: callcenter.DirectionIncoming, ParentCallID: ptr(int64(800)), RootCallID: ptr(int64(799)),
		PhoneNumberID: 3, PhoneNumber: "+15550100", AssignedAgentID: ptr(int64(7)), AssignedAgentName: ptr("Ann"),
		AssignedTeamID: ptr(int64(2)), AssignedTeamName: ptr("Sales"), AssignedCallQueueID: ptr(int64(4)),
		AssignedCallQueueName: ptr("Main"), AssignedIVRID: ptr(int64(5)), AssignedIVRName: ptr("Menu"),
		CallNotes: "callback tomorrow", BillDuration: 42, BillDurationUnit: "seconds",
		CreatedTime: sampleTime, UpdatedTime: sampleTime.Add(time.Minute),
		Recording:           &callcenter.Recording{ID: 99, URL: "https://api.example/recordings/99", TranscriptionURL: ptr("https://api.example/t/99"), Duration: 30, DurationUnit: "seconds"},
		RecordingToRedact:   &callcenter.RecordingToRedact{ID: 98, URL: "https://api.example/r/98", Duration: 30, DurationUnit: "seconds"},
		IntegratedResources: []callcenter.IntegratedResource{{ID: 1, IntegrationName: "helpdesk", Type: "ticket"}},
		Participants:        []callcenter.Participant{richParticipant(), sparseParticipant()},
		ParallelCallGroups:  []json.RawMessage{json.RawMessage(`{"id":1}`), json.RawMessage(`null`)},
	}
}

// sparseCall is the earlier form: every nullable field null, no arrays.
func sparseCall() callcenter.Call {
	return callcenter.Call{ID: 813, Direction: "outgoing", CreatedTime: sampleTime, UpdatedTime: sampleTime}
}

func richParticipant() callcenter.Participant {
	return callcenter.Participant{
		ID: 4431, CallID: 812, CallerID: ptr(int64(12)), CallerNumber: ptr("+15550111"), CallerName: ptr("Bob"),
		ParticipantID: 12, ParticipantType: callcenter.ParticipantCustomer, ConnectionType: 0, CallStatus: 8,
		Duration: 30, DurationUnit: "seconds", EnqueuedTime: ptr(sampleTime), Cost: ptr(0.25), CostUnit: "USD",
		// An offset and nanoseconds, as times decoded from the API may carry.
		CreatedTime: sampleTime, UpdatedTime: sampleTime.Add(time.Second + time.Nanosecond).In(time.FixedZone("", 3600)),
	}
}

func sparseParticipant() callcenter.Participant {
	return callcenter.Participant{ID: 4432, CallID: 812, ParticipantID: 7, ParticipantType: callcenter.ParticipantAgent,
		ConnectionType: 1, CallStatus: 13, CreatedTime: sampleTime, UpdatedTime: sampleTime}
}

func richUser() callcenter.User {
	return callcenter.User{
		ID: 7, Name: "Ann", Email: "ann@example.com", Phone: "+15550102", Status: 1, Preference: 1, MobileAppPreference: 7,
		LastCallTime: ptr(sampleTime), LastSeenTime: ptr(sampleTime), Confirmed: true, Language: ptr("en"),
		TimeZone: "Europe/Paris", Role: callcenter.RoleAgent, Teams: []callcenter.TeamRef{{ID: 2}, {ID: 3}},
	}
}

func sparseUser() callcenter.User { return callcenter.User{ID: 8, Deleted: true} }

func richMetric() callcenter.CallMetric {
	return callcenter.CallMetric{
		ID: 5, CallID: 812, CreatedTime: sampleTime, UpdatedTime: sampleTime.Add(time.Hour),
		IVRTime: 3, IVRTimeUnit: "seconds", HoldDuration: 4, HoldDurationUnit: "seconds", CallWorkTime: 5, CallWorkTimeUnit: "seconds",
		TotalRingingTime: ptr(int64(6)), TotalRingingTimeUnit: "seconds", TalkTime: 30, TalkTimeUnit: "seconds",
		AnsweringSpeed: ptr(int64(2)), AnsweringSpeedUnit: "seconds", RecordingDuration: 30, RecordingDurationUnit: "seconds",
		BillDuration: ptr(int64(42)), BillDurationUnit: "seconds", Cost: ptr(1.5), CostUnit: "USD",
		Csat:      &callcenter.Csat{TransferMade: true, Outcome: json.RawMessage(`"satisfied"`), Time: 9, TimeUnit: "seconds"},
		Tags:      []callcenter.Tag{{Raw: json.RawMessage(`"interested"`)}, {Raw: json.RawMessage(`{"name":"follow up"}`)}, {}},
		LifeCycle: []callcenter.LifeCycleEvent{{Type: "enqueued", QueueID: ptr(int64(4)), ID: 7, LegType: 1, Timestamp: sampleTime}, {Type: "hangup", ID: 7, LegType: 1, Timestamp: sampleTime.Add(time.Minute)}},
	}
}

// sparseMetric has every nullable field null, a csat with a null outcome and no
// life cycle (omitted).
func sparseMetric() callcenter.CallMetric {
	return callcenter.CallMetric{ID: 6, CallID: 813, CreatedTime: sampleTime, UpdatedTime: sampleTime,
		Csat: &callcenter.Csat{}}
}

func changes() []event.Change {
	return []event.Change{
		{Field: "assigned_agent_id", Previous: json.RawMessage(`7`), Current: json.RawMessage(`8`)},
		{Field: "recording", Previous: json.RawMessage(`null`), Current: json.RawMessage(`{"id":99}`)},
	}
}

func userState(status, pref int) event.UserState {
	return event.UserState{Status: status, StatusName: "Online", Preference: pref, PreferenceName: "Lunch", MobileAppPreference: 1}
}

// sample is one event to validate.
type sample struct {
	name   string
	typ    event.Type
	entity string
	data   any
}

// samples holds at least one rich and one sparse event of every catalog type.
func samples() []sample {
	team := callcenter.Team{ID: 2, Name: "Sales", Description: "EU", Users: []callcenter.UserRef{{ID: 7}}, OmniChannel: true}
	status := event.CallStatus{Code: 8, Label: "in progress"}
	return []sample{
		{"rich", event.CallCreated, "calls/812", event.CallData{Call: richCall()}},
		{"sparse", event.CallCreated, "calls/813", event.CallData{Call: sparseCall()}},
		{"rich", event.CallUpdated, "calls/812", event.CallUpdatedData{Call: richCall(), Changes: changes()}},
		{"sparse", event.CallUpdated, "calls/813", event.CallUpdatedData{Call: sparseCall(), Changes: changes()[:1]}},
		{"rich", event.CallEnded, "calls/812", event.CallData{Call: richCall()}},
		{"sparse", event.CallEnded, "calls/813", event.CallData{Call: sparseCall()}},
		{"rich", event.ParticipantJoined, "calls/812/participants/4431", event.ParticipantData{CallID: 812, Participant: richParticipant()}},
		{"sparse", event.ParticipantJoined, "calls/812/participants/4432", event.ParticipantData{CallID: 812, Participant: sparseParticipant()}},
		{"rich", event.ParticipantStatusChanged, "calls/812/participants/4431", event.ParticipantStatusData{CallID: 812, Participant: richParticipant(), Previous: event.CallStatus{Code: 13, Label: "connecting"}, Current: status}},
		{"sparse", event.ParticipantStatusChanged, "calls/812/participants/4432", event.ParticipantStatusData{CallID: 812, Participant: sparseParticipant(), Current: status}},
		{"rich", event.UserCreated, "users/7", event.UserData{User: richUser()}},
		{"sparse", event.UserCreated, "users/8", event.UserData{User: sparseUser()}},
		{"rich", event.UserUpdated, "users/7", event.UserData{User: richUser(), Changes: changes()}},
		{"rich", event.UserDeleted, "users/8", event.UserData{User: sparseUser(), Changes: changes()}},
		{"sparse", event.UserDeleted, "users/8", event.UserData{User: sparseUser()}},
		{"rich", event.UserStatusChanged, "users/7", event.UserStatusData{User: richUser(), Previous: userState(1, 1), Current: userState(2, 7), Changed: []string{"status", "preference"}}},
		{"sparse", event.UserStatusChanged, "users/8", event.UserStatusData{User: sparseUser(), Current: event.UserState{Status: 1}, Changed: []string{"status"}}},
		{"rich", event.TeamCreated, "teams/2", event.TeamData{Team: team}},
		{"sparse", event.TeamCreated, "teams/3", event.TeamData{Team: callcenter.Team{ID: 3}}},
		{"rich", event.TeamUpdated, "teams/2", event.TeamData{Team: team, MembersAdded: []int64{7}, MembersRemoved: []int64{9, 10}, Changes: changes()[:1]}},
		{"rich", event.MetricFinalized, "calls/812/metric", event.MetricData{CallID: 812, Metric: richMetric()}},
		{"sparse", event.MetricFinalized, "calls/813/metric", event.MetricData{CallID: 813, Metric: sparseMetric()}},
		{"rich", event.MetricUpdated, "calls/812/metric", event.MetricData{CallID: 812, Metric: richMetric(), Changes: changes()}},
		{"sparse", event.MetricUpdated, "calls/813/metric", event.MetricData{CallID: 813, Metric: callcenter.CallMetric{ID: 6, CallID: 813, LifeCycle: []callcenter.LifeCycleEvent{}}, Changes: changes()[:1]}},
	}
}

// body is the JSON message body of s, as callbus publishes it.
func (s sample) body(t *testing.T) []byte {
	t.Helper()
	e, err := event.New("acme", s.typ, s.entity, s.name, sampleTime, s.data)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
