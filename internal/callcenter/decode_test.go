package callcenter

import (
	"encoding/json"
	"github.com/callbus/callbus/events"
	"reflect"
	"strings"
	"testing"
)

// clearRaw zeroes the Raw fields that hold the input, for comparisons.
func clearRaw(v any) {
	switch x := v.(type) {
	case *events.User:
		x.Raw = nil
	case *UserStatus:
		x.Raw = nil
	case *events.Team:
		x.Raw = nil
	case *events.Call:
		x.Raw = nil
	case *events.CallMetric:
		x.Raw = nil
	case *Job:
		x.Raw = nil
	case *[]UserStatus:
		for i := range *x {
			(*x)[i].Raw = nil
		}
	}
}

func TestDecodeFixtures(t *testing.T) {
	tests := []struct {
		file string
		into any
		want any
	}{
		{"user.json", &events.User{}, &events.User{
			ID: 7, Name: "Ada Agent", Email: "ada@acme.example", Phone: "+15550107", Status: events.UserOnline,
			Preference: 1, MobileAppPreference: 0,
			LastCallTime: ptr(ts(t, "2024-03-05T10:17:10Z")), LastSeenTime: ptr(ts(t, "2024-03-05T11:00:00.123456Z")),
			Confirmed: true, Language: nil, TimeZone: "Europe/Berlin", Role: events.RoleAgent,
			Teams: []events.TeamRef{{ID: 2}, {ID: 3}},
		}},
		{"user_drift.json", &events.User{}, &events.User{
			ID: 8, Name: "Bob Supervisor", Email: "bob@acme.example", Phone: "15550108", Status: events.UserAfterCallWork,
			Preference: 1, LastCallTime: ptr(ts(t, "2024-03-05T10:17:10Z")), Confirmed: true,
			Language: ptr("de"), TimeZone: "Europe/Berlin", Role: events.RoleSupervisor, Teams: []events.TeamRef{{ID: 2}, {ID: 4}},
		}},
		{"user_status.json", &UserStatus{}, &UserStatus{
			ID: 4, Name: "Available on phone", StatusType: "online", StatusSubType: "online_phone", Emoji: "📱", Enabled: 1,
		}},
		{"user_statuses.json", &[]UserStatus{}, &[]UserStatus{
			{ID: 1, Name: "Offline", StatusType: "offline", StatusSubType: "offline", Enabled: 1},
			{ID: 2, Name: "Online", StatusType: "online", StatusSubType: "online", Emoji: "🟢", Enabled: 1},
			{ID: 3, Name: "Lunch", StatusType: "offline", StatusSubType: "offline", Emoji: "🍔", Enabled: 0},
		}},
		{"team.json", &events.Team{}, &events.Team{ID: 2, Name: "Support", Description: "First line", Users: []events.UserRef{{ID: 7}, {ID: 8}}}},
		{"call.json", &events.Call{}, &events.Call{
			ID: 812, Direction: events.DirectionIncoming, PhoneNumberID: 3, PhoneNumber: "+15550100",
			AssignedAgentID: ptr[int64](7), AssignedAgentName: ptr("Ada Agent"),
			AssignedTeamID: ptr[int64](2), AssignedTeamName: ptr("Support"),
			AssignedCallQueueID: ptr[int64](5), AssignedCallQueueName: ptr("Support queue"),
			CallNotes: "wants a refund", BillDuration: 95, BillDurationUnit: "seconds",
			CreatedTime: ts(t, "2024-03-05T10:15:30.25Z"), UpdatedTime: ts(t, "2024-03-05T10:17:10Z"),
			Recording:           &events.Recording{ID: 44, URL: "https://acme.example/api/v1/calls/812/recording/44", Duration: 90, DurationUnit: "seconds"},
			RecordingToRedact:   &events.RecordingToRedact{ID: 45, URL: "https://acme.example/redact/45", Duration: 90, DurationUnit: "seconds"},
			IntegratedResources: []events.IntegratedResource{{ID: 9, IntegrationName: "helpdesk", Type: "ticket"}},
			Participants: []events.Participant{
				{ID: 4431, CallID: 812, CallerID: ptr[int64](301), CallerNumber: ptr("+15550199"), CallerName: ptr("Carl Customer"),
					ParticipantID: 301, ParticipantType: events.ParticipantCustomer, ConnectionType: 0, CallStatus: 1,
					Duration: 95, DurationUnit: "seconds", EnqueuedTime: ptr(ts(t, "2024-03-05T10:15:32Z")),
					Cost: ptr(0.0125), CostUnit: "USD", CreatedTime: ts(t, "2024-03-05T10:15:30Z"), UpdatedTime: ts(t, "2024-03-05T10:17:10Z")},
				{ID: 4432, CallID: 812, ParticipantID: 7, ParticipantType: events.ParticipantAgent, ConnectionType: 1, CallStatus: 1,
					Duration: 88, DurationUnit: "seconds", Cost: ptr(0.0), CostUnit: "USD",
					CreatedTime: ts(t, "2024-03-05T10:15:37Z"), UpdatedTime: ts(t, "2024-03-05T10:17:10Z")},
			},
			ParallelCallGroups: []json.RawMessage{json.RawMessage(`{"id":1,"participants":[4432]}`)},
		}},
		{"call_earlier.json", &events.Call{}, &events.Call{
			ID: 700, Direction: events.DirectionOutgoing, PhoneNumberID: 3, PhoneNumber: "+15550100",
			AssignedAgentID: ptr[int64](7), BillDurationUnit: "seconds",
			CreatedTime: ts(t, "2023-12-31T23:59:59Z"), UpdatedTime: ts(t, "2024-01-01T00:00:30Z"),
			Recording: &events.Recording{ID: 12, URL: "https://acme.example/api/v1/calls/700/recording/12", DurationUnit: "seconds"},
			Participants: []events.Participant{{ID: 3001, CallID: 700, CallerID: ptr[int64](305), CallerNumber: ptr("+15550195"),
				ParticipantID: 305, ParticipantType: events.ParticipantCustomer, CallStatus: 3, DurationUnit: "seconds", CostUnit: "USD",
				CreatedTime: ts(t, "2023-12-31T23:59:59Z"), UpdatedTime: ts(t, "2024-01-01T00:00:30Z")}},
		}},
		{"call_drift.json", &events.Call{}, &events.Call{
			ID: 813, Direction: events.DirectionIncoming, ParentCallID: ptr[int64](812), PhoneNumberID: 3, PhoneNumber: "15550100",
			AssignedAgentID: ptr[int64](7), AssignedAgentName: ptr("Ada Agent"),
			BillDuration: 60, BillDurationUnit: "seconds",
			CreatedTime: ts(t, "2024-03-05T10:15:30Z"), UpdatedTime: ts(t, "2024-03-05T10:16:30.5Z"),
			Participants: []events.Participant{
				{ID: 5001, CallID: 813, CallerID: ptr[int64](302), CallerNumber: ptr("+15550198"), ParticipantID: 302,
					ParticipantType: events.ParticipantCustomer, CallStatus: 8, Cost: ptr(0.5), CostUnit: "EUR",
					CreatedTime: ts(t, "2024-03-05T10:30:30Z")},
				{ID: 5002, CallID: 813, ParticipantID: 7, ParticipantType: events.ParticipantAgent, ConnectionType: 5, CallStatus: 12,
					Duration: 31, DurationUnit: "seconds", EnqueuedTime: ptr(ts(t, "2024-03-05T10:15:40Z")), Cost: ptr(2.0), CostUnit: "EUR",
					CreatedTime: ts(t, "2024-03-05T10:15:40Z"), UpdatedTime: ts(t, "2024-03-05T10:16:11Z")},
			},
			ParallelCallGroups: []json.RawMessage{},
		}},
		{"call_metric.json", &events.CallMetric{}, &events.CallMetric{
			ID: 900, CallID: 812, CreatedTime: ts(t, "2024-03-05T10:15:30Z"), UpdatedTime: ts(t, "2024-03-05T10:20:00Z"),
			IVRTime: 5, IVRTimeUnit: "seconds", HoldDuration: 10, HoldDurationUnit: "seconds",
			CallWorkTime: 30, CallWorkTimeUnit: "seconds", TotalRingingTime: ptr[int64](7), TotalRingingTimeUnit: "seconds",
			TalkTime: 78, TalkTimeUnit: "seconds", AnsweringSpeed: ptr[int64](12), AnsweringSpeedUnit: "seconds",
			RecordingDuration: 90, RecordingDurationUnit: "seconds", BillDuration: ptr[int64](95), BillDurationUnit: "seconds",
			Cost: ptr(0.0125), CostUnit: "USD", Csat: &events.Csat{TimeUnit: "seconds"},
			Tags: []events.Tag{{Raw: json.RawMessage(`{"name":"follow up"}`)}},
			LifeCycle: []events.LifeCycleEvent{
				{Type: "call_queue_started", QueueID: ptr[int64](5), ID: 7, LegType: 1, Timestamp: ts(t, "2024-03-05T10:15:31Z")},
				{Type: "enqueued", QueueID: ptr[int64](5), ID: 7, LegType: 1, Timestamp: ts(t, "2024-03-05T10:15:32Z")},
				{Type: "answered", ID: 7, LegType: 2, Timestamp: ts(t, "2024-03-05T10:15:44Z")},
				{Type: "hangup", ID: 7, LegType: 2, Timestamp: ts(t, "2024-03-05T10:17:10Z")},
			},
		}},
		{"call_metric_drift.json", &events.CallMetric{}, &events.CallMetric{
			ID: 901, CallID: 813, CreatedTime: ts(t, "2024-03-05T10:15:30Z"), UpdatedTime: ts(t, "2024-03-05T10:20:00Z"),
			IVRTimeUnit: "seconds", HoldDurationUnit: "seconds", CallWorkTimeUnit: "seconds", TotalRingingTimeUnit: "seconds",
			TalkTimeUnit: "seconds", AnsweringSpeedUnit: "seconds", RecordingDurationUnit: "seconds", BillDurationUnit: "seconds",
			CostUnit: "EUR", Csat: &events.Csat{TransferMade: true, Outcome: json.RawMessage(`"satisfied"`), Time: 12, TimeUnit: "seconds"},
			Tags: []events.Tag{{Raw: json.RawMessage(`"interested"`)}, {Raw: json.RawMessage(`{"id":3,"label":"vip"}`)}},
			LifeCycle: []events.LifeCycleEvent{
				{Type: "voicemail_initiated", ID: 7, LegType: 1, Timestamp: ts(t, "2024-03-05T12:15:50Z")},
				{Type: "queue_wait_timeout", QueueID: ptr[int64](5), ID: 7, LegType: 1, Timestamp: ts(t, "2024-03-05T10:15:49Z")},
			},
		}},
		{"call_metric_no_life_cycle.json", &events.CallMetric{}, &events.CallMetric{
			ID: 902, CallID: 814, CreatedTime: ts(t, "2024-03-05T10:30:00Z"), UpdatedTime: ts(t, "2024-03-05T10:30:00Z"),
			TotalRingingTime: ptr[int64](0), AnsweringSpeed: ptr[int64](0), BillDuration: ptr[int64](0), Cost: ptr(0.0),
			CostUnit: "USD", Tags: []events.Tag{},
		}},
		{"export_job.json", &ExportJob{}, &ExportJob{ID: 17, Status: JobStarted, Message: "Export job created; see /api/v1/jobs/17"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data := fixture(t, tt.file)
			if err := json.Unmarshal(data, tt.into); err != nil {
				t.Fatalf("decode: %v", err)
			}
			clearRaw(tt.into)
			if !reflect.DeepEqual(tt.into, tt.want) {
				got, _ := json.MarshalIndent(tt.into, "", " ")
				want, _ := json.MarshalIndent(tt.want, "", " ")
				t.Errorf("got\n%s\nwant\n%s", got, want)
			}
			assertRoundTrip(t, tt.into)
		})
	}
}

// assertRoundTrip checks that v encodes and decodes back to itself, and that the
// encoding is stable.
func assertRoundTrip(t *testing.T, v any) {
	t.Helper()
	enc1, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	back := reflect.New(reflect.TypeOf(v).Elem()).Interface()
	if err := json.Unmarshal(enc1, back); err != nil {
		t.Fatalf("decode of own encoding %s: %v", enc1, err)
	}
	clearRaw(back)
	clearRaw(v)
	if !reflect.DeepEqual(back, v) {
		t.Fatalf("round trip changed the value:\nencoded %s\nfirst  %#v\nsecond %#v", enc1, v, back)
	}
	enc2, _ := json.Marshal(back)
	if string(enc1) != string(enc2) {
		t.Fatalf("unstable encoding:\n%s\n%s", enc1, enc2)
	}
}

func TestRawKept(t *testing.T) {
	data := fixture(t, "call_drift.json")
	var c events.Call
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatal(err)
	}
	if string(c.Raw) != strings.TrimSpace(string(data)) {
		t.Errorf("Raw is not the input")
	}
	if !strings.Contains(string(c.Raw), "some_future_field") {
		t.Errorf("Raw lost unknown fields")
	}
}

func TestEncodeCanonical(t *testing.T) {
	var m events.CallMetric
	if err := json.Unmarshal(fixture(t, "call_metric.json"), &m); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(m)
	s := string(b)
	for _, want := range []string{`"timestamp":"2024-03-05T10:15:31Z"`, `"queue_id":5`, `"total_ringing_time":7`, `"tags":[{"name":"follow up"}]`} {
		if !strings.Contains(s, want) {
			t.Errorf("encoding lacks %s: %s", want, s)
		}
	}
	if strings.Contains(s, "time_stamp") || strings.Contains(s, "Raw") {
		t.Errorf("encoding has a non-canonical key: %s", s)
	}
	var c events.Call
	if err := json.Unmarshal(fixture(t, "call_drift.json"), &c); err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(c)
	s = string(b)
	for _, want := range []string{`"id":813`, `"direction":"incoming"`, `"created_time":"2024-03-05T10:15:30Z"`, `"root_call_id":null`, `"cost":0.5`, `"enqueued_time":null`} {
		if !strings.Contains(s, want) {
			t.Errorf("encoding lacks %s: %s", want, s)
		}
	}
	var cm events.CallMetric
	_ = json.Unmarshal(fixture(t, "call_metric_no_life_cycle.json"), &cm)
	if b, _ := json.Marshal(cm); strings.Contains(string(b), "life_cycle") {
		t.Errorf("life_cycle written although absent: %s", b)
	}
}

func TestDecodeJobWrapped(t *testing.T) {
	var j Job
	if err := decodeOne(fixture(t, "job.json"), "bulk_job", &j); err != nil {
		t.Fatal(err)
	}
	clearRaw(&j)
	want := Job{ID: 17, CreatedTime: ts(t, "2024-03-05T10:00:00Z"), UpdatedTime: ts(t, "2024-03-05T09:05:00Z"),
		Status: JobCompleted, Links: []JobLink{{Href: "https://acme.example/api/v1/jobs/17", Method: "GET", Rel: "self"}},
		JobData: &JobData{Path: "https://files.example/reports/17.zip"}}
	if !reflect.DeepEqual(j, want) {
		t.Errorf("got %+v want %+v", j, want)
	}
	// A bare job is accepted too.
	var bare Job
	if err := decodeOne([]byte(`{"id": "18", "status": "started"}`), "bulk_job", &bare); err != nil || bare.ID != 18 {
		t.Errorf("bare job: %+v %v", bare, err)
	}
}

func TestDecodeList(t *testing.T) {
	env, err := decodeList[events.Call](fixture(t, "calls_page.json"), "calls")
	if err != nil || len(env.items) != 2 || env.meta == nil || *env.meta != (Meta{TotalCount: 12, TotalPages: 6, Current: 1}) {
		t.Fatalf("calls page: %+v %+v %v", env.items, env.meta, err)
	}
	if env.items[1].Direction != events.DirectionOutgoing {
		t.Errorf("direction %q", env.items[1].Direction)
	}
	env, err = decodeList[events.Call](fixture(t, "calls_page_no_meta.json"), "calls")
	if err != nil || len(env.items) != 1 || env.meta != nil {
		t.Fatalf("no meta: %+v %+v %v", env.items, env.meta, err)
	}
	metrics, err := decodeList[events.CallMetric](fixture(t, "call_metrics_page.json"), "call_metrics")
	if err != nil || len(metrics.items) != 1 || len(metrics.items[0].LifeCycle) != 1 {
		t.Fatalf("metrics page: %+v %v", metrics, err)
	}
	statuses, err := decodeList[UserStatus](fixture(t, "user_statuses.json"), "user_statuses")
	if err != nil || len(statuses.items) != 3 || statuses.meta != nil {
		t.Fatalf("bare array: %+v %v", statuses, err)
	}
	for _, bad := range []string{`{"meta": {}}`, `null`, `"x"`, `{"calls": {}}`, `[1,`} {
		if _, err := decodeList[events.Call]([]byte(bad), "calls"); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name, in, wantErr string
	}{
		{"id object", `{"id": {}}`, `decode call field "id": want a scalar, got an object`},
		{"id fraction", `{"id": 1.5}`, `want an integer, got a fraction`},
		{"id word", `{"id": "abc"}`, `want an integer, got a non-numeric value`},
		{"bad time", `{"created_time": "yesterday"}`, `want an ISO 8601 date-time`},
		{"time number", `{"created_time": 1700000000}`, `want a date-time string`},
		{"participants object", `{"participants": {}}`, `want an array`},
		{"participant cost", `{"participants": [{"cost": "NaN"}]}`, `decode participant field "cost": want a finite number`},
		{"not an object", `[1]`, `decode call: want an object, got array`},
		{"bool id", `{"id": true}`, `want an integer, got a boolean`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c events.Call
			err := json.Unmarshal([]byte(tt.in), &c)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("got %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestTagName(t *testing.T) {
	for in, want := range map[string]string{`"vip"`: "vip", `{"name":"follow up"}`: "follow up", `{"label":"x"}`: "x", `{"id":1}`: "", `3`: ""} {
		if got := (events.Tag{Raw: json.RawMessage(in)}).Name(); got != want {
			t.Errorf("Tag(%s).Name() = %q, want %q", in, got, want)
		}
	}
}
