package diff

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/callbus/callbus/internal/callcenter"
	"github.com/callbus/callbus/internal/event"
)

func metric(upd int, talk int64) callcenter.CallMetric {
	return callcenter.CallMetric{ID: 5, CallID: 1, CreatedTime: at(0), UpdatedTime: at(upd), TalkTime: talk}
}

func TestMetricDiff(t *testing.T) {
	open := CallState{}
	ended := CallState{Ended: true, EndedAt: at(9)}
	tests := []struct {
		name  string
		steps []struct {
			m    callcenter.CallMetric
			call CallState
		}
		want []event.Type
	}{
		{"open call: nothing", steps(metric(0, 0), open, metric(5, 3), open), nil},
		{"ended but metric not updated since", steps(metric(9, 3), ended), nil},
		{"overdue: final without an update after the end", steps(metric(9, 3), ended, metric(9, 3), CallState{Ended: true, EndedAt: at(9), Overdue: true}),
			[]event.Type{event.MetricFinalized}},
		{"finalized once", steps(metric(0, 0), open, metric(20, 9), ended, metric(20, 9), ended),
			[]event.Type{event.MetricFinalized}},
		{"later change is metric.updated", steps(metric(20, 9), ended, metric(40, 11), ended),
			[]event.Type{event.MetricFinalized, event.MetricUpdated}},
		{"stale after final ignored", steps(metric(40, 11), ended, metric(20, 9), ended),
			[]event.Type{event.MetricFinalized}},
		{"update without tracked change is silent", steps(metric(20, 9), ended, metric(30, 9), ended),
			[]event.Type{event.MetricFinalized}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var snap []byte
			var got []event.Type
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
	m    callcenter.CallMetric
	call CallState
} {
	var out []struct {
		m    callcenter.CallMetric
		call CallState
	}
	for i := 0; i < len(args); i += 2 {
		out = append(out, struct {
			m    callcenter.CallMetric
			call CallState
		}{args[i].(callcenter.CallMetric), args[i+1].(CallState)})
	}
	return out
}

var statuses = []callcenter.UserStatus{
	{ID: 0, Name: "Offline", StatusType: "offline"},
	{ID: 1, Name: "Online", StatusType: "online"},
	{ID: 2, Name: "Busy", StatusType: "busy"},
	{ID: 3, Name: "After call work", StatusType: "acw"},
	{ID: 7, Name: "Lunch", StatusType: "offline"},
}

func user(status, pref int) callcenter.User {
	return callcenter.User{ID: 3, Name: "Ann", Email: "ann@example.com", Role: "Agent", Status: status, Preference: pref, Teams: []callcenter.TeamRef{{ID: 2}}}
}

func TestUserDiff(t *testing.T) {
	names := NewStatusNames(statuses)
	promoted := user(1, 1)
	promoted.Role = "Supervisor"
	deleted := user(0, 0)
	deleted.Deleted = true
	tests := []struct {
		name string
		obs  []callcenter.User
		want []event.Type
	}{
		{"created", []callcenter.User{user(1, 1)}, []event.Type{event.UserCreated}},
		{"no change", []callcenter.User{user(1, 1), user(1, 1)}, []event.Type{event.UserCreated}},
		{"status", []callcenter.User{user(1, 1), user(2, 1), user(1, 1)},
			[]event.Type{event.UserCreated, event.UserStatusChanged, event.UserStatusChanged}},
		{"role", []callcenter.User{user(1, 1), promoted}, []event.Type{event.UserCreated, event.UserUpdated}},
		{"deleted", []callcenter.User{user(1, 1), deleted}, []event.Type{event.UserCreated, event.UserDeleted, event.UserStatusChanged}},
		{"undeleted", []callcenter.User{deleted, user(0, 0)}, []event.Type{event.UserCreated, event.UserUpdated}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var snap []byte
			var got []event.Type
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
	names := NewStatusNames(statuses)
	var snap []byte
	var evs []event.Envelope
	for _, u := range []callcenter.User{user(1, 1), user(2, 1), user(3, 1), user(0, 7)} {
		r, err := User(Scope{Account: "acme"}, snap, u, names, at(1))
		if err != nil {
			t.Fatal(err)
		}
		evs, snap = append(evs, r.Events...), r.Snap
	}
	var prev *event.UserState
	for _, e := range evs[1:] {
		var d event.UserStatusData
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
	team := func(name string, members ...int64) callcenter.Team {
		tm := callcenter.Team{ID: 2, Name: name}
		for _, m := range members {
			tm.Users = append(tm.Users, callcenter.UserRef{ID: m})
		}
		return tm
	}
	var snap []byte
	var evs []event.Envelope
	for _, tm := range []callcenter.Team{team("Sales", 1, 2), team("Sales", 2, 1), team("Sales", 2, 3), team("Sales EU", 2, 3)} {
		r, err := Team(Scope{Account: "acme"}, snap, tm, at(1))
		if err != nil {
			t.Fatal(err)
		}
		evs, snap = append(evs, r.Events...), r.Snap
	}
	if got, want := types(evs), []event.Type{event.TeamCreated, event.TeamUpdated, event.TeamUpdated}; !slices.Equal(got, want) {
		t.Fatalf("got %v want %v", got, want)
	}
	var d event.TeamData
	if err := json.Unmarshal(evs[1].Data, &d); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.MembersAdded, []int64{3}) || !slices.Equal(d.MembersRemoved, []int64{1}) {
		t.Fatalf("members %+v", d)
	}
}
