package diff_test

import (
	"testing"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/diff"
)

// After a rollback the same snapshot is diffed again: the same transition must
// get the same id (a duplicate to drop), a different one a different id even
// though it takes the same sequence number.
func TestIDBindsTheTransition(t *testing.T) {
	scope := diff.Scope{Account: "acme", Epoch: "e1"}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	team := func(name string, members ...int64) events.Team {
		tm := events.Team{ID: 2, Name: name}
		for _, m := range members {
			tm.Users = append(tm.Users, events.UserRef{ID: m})
		}
		return tm
	}
	created, err := diff.Team(scope, nil, team("Sales", 1), at)
	if err != nil {
		t.Fatal(err)
	}
	id := func(tm events.Team) string {
		r, err := diff.Team(scope, created.Snap, tm, at)
		if err != nil || len(r.Events) != 1 {
			t.Fatalf("diff %v: %v, %d events", tm, err, len(r.Events))
		}
		return r.Events[0].ID
	}
	first := id(team("Sales", 1, 2))
	tests := []struct {
		name string
		next events.Team
		same bool
	}{
		{"the same transition again", team("Sales", 1, 2), true},
		{"the same transition observed later", team("Sales", 2, 1), true},
		{"another member added", team("Sales", 1, 3), false},
		{"a rename instead", team("Sales EU", 1), false},
	}
	for _, tt := range tests {
		if got := id(tt.next); (got == first) != tt.same {
			t.Errorf("%s: id %s, first %s, want same=%v", tt.name, got, first, tt.same)
		}
	}
}
