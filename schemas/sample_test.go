package schemas

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/event"
)

var sampleTime = time.Date(2026, 11, 21, 10, 0, 3, 0, time.UTC)

func ptr[T any](v T) *T { return &v }

// richCall has every nullable field set, recordings and participants.
func richCall() events.Call {
	return events.Call{
		ID: 812, Direction: events.DirectionIncoming, ParentCallID: ptr(int64(800)), RootCallID: ptr(int64(799)),
		PhoneNumberID: 3, PhoneNumber: "+15550100", AssignedAgentID: ptr(int64(7)), AssignedAgentName: ptr("Ann"),
		AssignedTeamID: ptr(int64(2)), AssignedTeamName: ptr("Sales"), AssignedCallQueueID: ptr(int64(4)),
		AssignedCallQueueName: ptr("Main"), AssignedIVRID: ptr(int64(5)), AssignedIVRName: ptr("Menu"),
		CallNotes: "callback tomorrow", BillDuration: 42, BillDurationUnit: "seconds",
		CreatedTime: sampleTime, UpdatedTime: sampleTime.Add(time.Minute),
		Recording:           &events.Recording{ID: 99, URL: "https://api.example/recordings/99", TranscriptionURL: ptr("https://api.example/t/99"), Duration: 30, DurationUnit: "seconds"},
		RecordingToRedact:   &events.RecordingToRedact{ID: 98, URL: "https://api.example/r/98", Duration: 30, DurationUnit: "seconds"},
		IntegratedResources: []events.IntegratedResource{{ID: 1, IntegrationName: "helpdesk", Type: "ticket"}},
		Participants:        []events.Participant{richParticipant(), sparseParticipant()},
		ParallelCallGroups:  []json.RawMessage{json.RawMessage(`{"id":1}`), json.RawMessage(`null`)},
	}
}

// sparseCall is the earlier form: every nullable field null, no arrays.
func sparseCall() events.Call {
	return events.Call{ID: 813, Direction: "outgoing", CreatedTime: sampleTime, UpdatedTime: sampleTime}
}

func richParticipant() events.Participant {
	return events.Participant{
		ID: 4431, CallID: 812, CallerID: ptr(int64(12)), CallerNumber: ptr("+15550111"), CallerName: ptr("Bob"),
		ParticipantID: 12, ParticipantType: events.ParticipantCustomer, ConnectionType: 0, CallStatus: 8,
		Duration: 30, DurationUnit: "seconds", EnqueuedTime: ptr(sampleTime), Cost: ptr(0.25), CostUnit: "USD",
		// An offset and nanoseconds, as times decoded from the API may carry.
		CreatedTime: sampleTime, UpdatedTime: sampleTime.Add(time.Second + time.Nanosecond).In(time.FixedZone("", 3600)),
	}
}

func sparseParticipant() events.Participant {
	return events.Participant{ID: 4432, CallID: 812, ParticipantID: 7, ParticipantType: events.ParticipantAgent,
		ConnectionType: 1, CallStatus: 13, CreatedTime: sampleTime, UpdatedTime: sampleTime}
}

func richUser() events.User {
	return events.User{
		ID: 7, Name: "Ann", Email: "ann@example.com", Phone: "+15550102", Status: 1, Preference: 1, MobileAppPreference: 7,
		LastCallTime: ptr(sampleTime), LastSeenTime: ptr(sampleTime), Confirmed: true, Language: ptr("en"),
		TimeZone: "Europe/Paris", Role: events.RoleAgent, Teams: []events.TeamRef{{ID: 2}, {ID: 3}},
	}
}

func sparseUser() events.User { return events.User{ID: 8, Deleted: true} }

func richMetric() events.CallMetric {
	return events.CallMetric{
		ID: 5, CallID: 812, CreatedTime: sampleTime, UpdatedTime: sampleTime.Add(time.Hour),
		IVRTime: 3, IVRTimeUnit: "seconds", HoldDuration: 4, HoldDurationUnit: "seconds", CallWorkTime: 5, CallWorkTimeUnit: "seconds",
		TotalRingingTime: ptr(int64(6)), TotalRingingTimeUnit: "seconds", TalkTime: 30, TalkTimeUnit: "seconds",
		AnsweringSpeed: ptr(int64(2)), AnsweringSpeedUnit: "seconds", RecordingDuration: 30, RecordingDurationUnit: "seconds",
		BillDuration: ptr(int64(42)), BillDurationUnit: "seconds", Cost: ptr(1.5), CostUnit: "USD",
		Csat:      &events.Csat{TransferMade: true, Outcome: json.RawMessage(`"satisfied"`), Time: 9, TimeUnit: "seconds"},
		Tags:      []events.Tag{{Raw: json.RawMessage(`"interested"`)}, {Raw: json.RawMessage(`{"name":"follow up"}`)}, {}},
		LifeCycle: []events.LifeCycleEvent{{Type: "enqueued", QueueID: ptr(int64(4)), ID: 7, LegType: 1, Timestamp: sampleTime}, {Type: "hangup", ID: 7, LegType: 1, Timestamp: sampleTime.Add(time.Minute)}},
	}
}

// sparseMetric has every nullable field null, a csat with a null outcome and no
// life cycle (omitted).
func sparseMetric() events.CallMetric {
	return events.CallMetric{ID: 6, CallID: 813, CreatedTime: sampleTime, UpdatedTime: sampleTime,
		Csat: &events.Csat{}}
}

func changes() []events.Change {
	return []events.Change{
		{Field: "assigned_agent_id", Previous: json.RawMessage(`7`), Current: json.RawMessage(`8`)},
		{Field: "recording", Previous: json.RawMessage(`null`), Current: json.RawMessage(`{"id":99}`)},
	}
}

func userState(status, pref int) events.UserState {
	return events.UserState{Status: status, StatusName: "Online", Preference: pref, PreferenceName: "Lunch", MobileAppPreference: 1}
}

// sample is one event to validate.
type sample struct {
	name   string
	typ    events.Type
	entity string
	data   any
}

// samples holds at least one rich and one sparse event of every catalog type.
func samples() []sample {
	team := events.Team{ID: 2, Name: "Sales", Description: "EU", Users: []events.UserRef{{ID: 7}}, OmniChannel: true}
	status := events.CallStatus{Code: 8, Label: "in progress"}
	return []sample{
		{"rich", events.CallCreated, "calls/812", events.CallData{Call: richCall()}},
		{"sparse", events.CallCreated, "calls/813", events.CallData{Call: sparseCall()}},
		{"rich", events.CallUpdated, "calls/812", events.CallUpdatedData{Call: richCall(), Changes: changes()}},
		{"sparse", events.CallUpdated, "calls/813", events.CallUpdatedData{Call: sparseCall(), Changes: changes()[:1]}},
		{"rich", events.CallEnded, "calls/812", events.CallData{Call: richCall()}},
		{"sparse", events.CallEnded, "calls/813", events.CallData{Call: sparseCall()}},
		{"rich", events.ParticipantJoined, "calls/812/participants/4431", events.ParticipantData{CallID: 812, Participant: richParticipant()}},
		{"sparse", events.ParticipantJoined, "calls/812/participants/4432", events.ParticipantData{CallID: 812, Participant: sparseParticipant()}},
		{"rich", events.ParticipantStatusChanged, "calls/812/participants/4431", events.ParticipantStatusData{CallID: 812, Participant: richParticipant(), Previous: events.CallStatus{Code: 13, Label: "connecting"}, Current: status}},
		{"sparse", events.ParticipantStatusChanged, "calls/812/participants/4432", events.ParticipantStatusData{CallID: 812, Participant: sparseParticipant(), Current: status}},
		{"rich", events.UserCreated, "users/7", events.UserData{User: richUser()}},
		{"sparse", events.UserCreated, "users/8", events.UserData{User: sparseUser()}},
		{"rich", events.UserUpdated, "users/7", events.UserData{User: richUser(), Changes: changes()}},
		{"rich", events.UserDeleted, "users/8", events.UserData{User: sparseUser(), Changes: changes()}},
		{"sparse", events.UserDeleted, "users/8", events.UserData{User: sparseUser()}},
		{"rich", events.UserStatusChanged, "users/7", events.UserStatusData{User: richUser(), Previous: userState(1, 1), Current: userState(2, 7), Changed: []string{"status", "preference"}}},
		{"sparse", events.UserStatusChanged, "users/8", events.UserStatusData{User: sparseUser(), Current: events.UserState{Status: 1}, Changed: []string{"status"}}},
		{"rich", events.TeamCreated, "teams/2", events.TeamData{Team: team}},
		{"sparse", events.TeamCreated, "teams/3", events.TeamData{Team: events.Team{ID: 3}}},
		{"rich", events.TeamUpdated, "teams/2", events.TeamData{Team: team, MembersAdded: []int64{7}, MembersRemoved: []int64{9, 10}, Changes: changes()[:1]}},
		{"rich", events.MetricFinalized, "calls/812/metric", events.MetricData{CallID: 812, Metric: richMetric()}},
		{"sparse", events.MetricFinalized, "calls/813/metric", events.MetricData{CallID: 813, Metric: sparseMetric()}},
		{"rich", events.MetricUpdated, "calls/812/metric", events.MetricData{CallID: 812, Metric: richMetric(), Changes: changes()}},
		{"sparse", events.MetricUpdated, "calls/813/metric", events.MetricData{CallID: 813, Metric: events.CallMetric{ID: 6, CallID: 813, LifeCycle: []events.LifeCycleEvent{}}, Changes: changes()[:1]}},
		{"rich", events.AccountWatermark, "accounts/acme", events.WatermarkData{IntervalSeconds: 30, State: events.StateBudgetStarved, Reason: "calls every 20s, target 10s",
			Resources: []events.ResourceMark{{Resource: "calls", Until: sampleTime}, {Resource: "users", Until: sampleTime.Add(-time.Second)}}}},
		{"sparse", events.AccountWatermark, "accounts/acme", events.WatermarkData{IntervalSeconds: 1, State: events.StateLeading, Resources: []events.ResourceMark{}}},
		{"rich", events.CallSnapshot, "calls/812", events.CallSnapshotData{Call: richCall(), Resync: events.Resync{Run: "r1"}}},
		{"sparse", events.CallSnapshot, "calls/813", events.CallSnapshotData{Call: sparseCall(), Resync: events.Resync{Run: "r1"}}},
		{"rich", events.UserSnapshot, "users/7", events.UserSnapshotData{User: richUser(), State: userState(2, 7), Resync: events.Resync{Run: "r1"}}},
		{"sparse", events.UserSnapshot, "users/8", events.UserSnapshotData{User: sparseUser(), Resync: events.Resync{Run: "r1"}}},
		{"rich", events.TeamSnapshot, "teams/2", events.TeamSnapshotData{Team: team, Resync: events.Resync{Run: "r1"}}},
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
