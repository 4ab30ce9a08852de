package diff

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/callbus/callbus/events"
)

func metric(upd int, talk int64) events.CallMetric {
	return events.CallMetric{ID: 5, CallID: 1, CreatedTime: at(0), UpdatedTime: at(upd), TalkTime: talk}
}

func TestMetricDiff(t *testing.T) {
	open := CallState{}
	ended := CallState{Ended: true, EndedAt: at(9)}
	tests := []struct {
		name  string
		steps []struct {
			m    events.CallMetric
			call CallState
		}
		want []events.Type
	}{
		{"open call: nothing", steps(metric(0, 0), open, metric(5, 3), open), nil},
		{"ended but metric not updated since", steps(metric(9, 3), ended), nil},
		{"overdue: final without an update after the end", steps(metric(9, 3), ended, metric(9, 3), CallState{Ended: true, EndedAt: at(9), Overdue: true}),
			[]events.Type{events.MetricFinalized}},
		{"finalized once", steps(metric(0, 0), open, metric(20, 9), ended, metric(20, 9), ended),
			[]events.Type{events.MetricFinalized}},
		{"later change is metric.updated", steps(metric(20, 9), ended, metric(40, 11), ended),
			[]events.Type{events.MetricFinalized, events.MetricUpdated}},
		{"stale after final ignored", steps(metric(40, 11), ended, metric(20, 9), ended),
			[]events.Type{events.MetricFinalized}},
		{"update without tracked change is silent", steps(metric(20, 9), ended, metric(30, 9), ended),
			[]events.Type{events.MetricFinalized}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var snap []byte
			var got []events.Type
			for _, s := range tc.steps {
				r, err := Metric(Scope{Account: "acme"}, snap, s.m, s.call)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, types(r.Events)...)
				snap = r.Snap
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("got %v want %v", got, tc.want)
			}
		})
	}
}

func steps(args ...any) []struct {
	m    events.CallMetric
	call CallState
} {
	var out []struct {
		m    events.CallMetric
		call CallState
	}
	for i := 0; i < len(args); i += 2 {
		out = append(out, struct {
			m    events.CallMetric
			call CallState
		}{args[i].(events.CallMetric), args[i+1].(CallState)})
	}
	return out
}

// statuses are the account's user statuses of these tests: id, status_type, name.
var statuses = []struct {
	id         int64
	statusType string
	name       string
}{
	{0, "offline", "Offline"},
	{1, "online", "Online"},
	{2, "busy", "Busy"},
	{3, "acw", "After call work"},
	{7, "offline", "Lunch"},
}

// testNames indexes statuses as poll does, one at a time.
func testNames() StatusNames {
	var n StatusNames
	for _, s := range statuses {
		n.Add(s.id, s.statusType, s.name)
	}
	return n
}

func user(status, pref int) events.User {
	return events.User{ID: 3, Name: "Ann", Email: "ann@example.com", Role: "Agent", Status: status, Preference: pref, Teams: []events.TeamRef{{ID: 2}}}
}

func TestUserDiff(t *testing.T) {
	names := testNames()
	promoted := user(1, 1)
	promoted.Role = "Supervisor"
	deleted := user(0, 0)
	deleted.Deleted = true
	tests := []struct {
		name string
		obs  []events.User
		want []events.Type
	}{
		{"created", []events.User{user(1, 1)}, []events.Type{events.UserCreated}},
		{"no change", []events.User{user(1, 1), user(1, 1)}, []events.Type{events.UserCreated}},
		{"status", []events.User{user(1, 1), user(2, 1), user(1, 1)},
			[]events.Type{events.UserCreated, events.UserStatusChanged, events.UserStatusChanged}},
		{"role", []events.User{user(1, 1), promoted}, []events.Type{events.UserCreated, events.UserUpdated}},
		{"deleted", []events.User{user(1, 1), deleted}, []events.Type{events.UserCreated, events.UserDeleted, events.UserStatusChanged}},
		{"undeleted", []events.User{deleted, user(0, 0)}, []events.Type{events.UserCreated, events.UserUpdated}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var snap []byte
			var got []events.Type
			for _, u := range tc.obs {
				r, err := User(Scope{Account: "acme"}, snap, u, names, at(1))
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, types(r.Events)...)
				snap = r.Snap
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("got %v want %v", got, tc.want)
			}
		})
	}
}

func TestUserStatusNamesAndChain(t *testing.T) {
	names := testNames()
	var snap []byte
	var evs []events.Envelope
	for _, u := range []events.User{user(1, 1), user(2, 1), user(3, 1), user(0, 7)} {
		r, err := User(Scope{Account: "acme"}, snap, u, names, at(1))
		if err != nil {
			t.Fatal(err)
		}
		evs, snap = append(evs, r.Events...), r.Snap
	}
	var prev *events.UserState
	for _, e := range evs[1:] {
		var d events.UserStatusData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			t.Fatal(err)
		}
		if prev != nil && d.Previous != *prev {
			t.Fatalf("chain broken: %+v then %+v", *prev, d.Previous)
		}
		prev = &d.Current
	}
	if prev.StatusName != "Offline" || prev.PreferenceName != "Lunch" {
		t.Fatalf("names: %+v", *prev)
	}
}

func TestTeamDiff(t *testing.T) {
	team := func(name string, members ...int64) events.Team {
		tm := events.Team{ID: 2, Name: name}
		for _, m := range members {
			tm.Users = append(tm.Users, events.UserRef{ID: m})
		}
		return tm
	}
	var snap []byte
	var evs []events.Envelope
	for _, tm := range []events.Team{team("Sales", 1, 2), team("Sales", 2, 1), team("Sales", 2, 3), team("Sales EU", 2, 3)} {
		r, err := Team(Scope{Account: "acme"}, snap, tm, at(1))
		if err != nil {
			t.Fatal(err)
		}
		evs, snap = append(evs, r.Events...), r.Snap
	}
	if got, want := types(evs), []events.Type{events.TeamCreated, events.TeamUpdated, events.TeamUpdated}; !slices.Equal(got, want) {
		t.Fatalf("got %v want %v", got, want)
	}
	var d events.TeamData
	if err := json.Unmarshal(evs[1].Data, &d); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.MembersAdded, []int64{3}) || !slices.Equal(d.MembersRemoved, []int64{1}) {
		t.Fatalf("members %+v", d)
	}
}

// TestStatusNamesOrder: the default status of a type is its lowest id, in
// whatever order the API lists the statuses.
func TestStatusNamesOrder(t *testing.T) {
	var n StatusNames
	for i := len(statuses) - 1; i >= 0; i-- {
		n.Add(statuses[i].id, statuses[i].statusType, statuses[i].name)
	}
	want := testNames()
	for v := -1; v <= 4; v++ {
		if got, w := n.Status(v), want.Status(v); got != w {
			t.Errorf("Status(%d) = %q, want %q", v, got, w)
		}
	}
	if got := n.Status(0); got != "Offline" {
		t.Errorf("Status(0) = %q, want Offline (id 0 before Lunch's 7)", got)
	}
	if got := n.Preference(7); got != "Lunch" {
		t.Errorf("Preference(7) = %q, want Lunch", got)
	}
}
