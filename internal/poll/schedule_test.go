package poll

import (
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)

// A resource is due its interval in force now after its last cycle began: a
// wait set while the interval was stretched ends as soon as it recovers.
func TestScheduleFollowsIntervals(t *testing.T) {
	s := newSchedule([]string{ResCalls, ResUsers})
	if res, _ := s.due(t0); res != ResCalls {
		t.Fatalf("first due %q, want calls (never ran, priority)", res)
	}
	s.ran(ResCalls, t0, 1)
	s.ran(ResUsers, t0, 1)
	s.setIntervals(map[string]time.Duration{ResCalls: 2 * time.Second, ResUsers: 12 * time.Second}, t0)
	if res, wait := s.due(t0.Add(time.Second)); res != "" || wait != time.Second {
		t.Fatalf("due %q, wait %v; want none for 1s", res, wait)
	}
	s.ran(ResCalls, t0.Add(2*time.Second), 1)
	s.setIntervals(map[string]time.Duration{ResCalls: 2 * time.Second, ResUsers: 3500 * time.Millisecond}, t0)
	if res, _ := s.due(t0.Add(3600 * time.Millisecond)); res != ResUsers {
		t.Errorf("at 3.6s due %q, want users (calls only at 4s)", res)
	}
	if got := s.next(ResUsers); !got.Equal(t0.Add(3500 * time.Millisecond)) {
		t.Errorf("users due at %v, want 3.5s after its last turn (12s before the intervals recovered)", got.Sub(t0))
	}
}

// Earliest deadline first; priority breaks ties; a failed cycle runs again
// after its interval or failedRetry, whichever is shorter.
func TestScheduleDueAndFailed(t *testing.T) {
	s := newSchedule([]string{ResCalls, ResUsers, ResTeams})
	for _, r := range s.order {
		s.ran(r, t0, 1)
	}
	s.setIntervals(map[string]time.Duration{ResCalls: 3 * time.Second, ResUsers: 2 * time.Second, ResTeams: time.Minute}, t0)
	if res, _ := s.due(t0.Add(3 * time.Second)); res != ResUsers {
		t.Errorf("due %q, want users (due at 2s, before calls at 3s)", res)
	}
	s.ran(ResUsers, t0.Add(3*time.Second), 1)
	s.ran(ResCalls, t0.Add(3*time.Second), 1)
	if res, _ := s.due(t0.Add(5 * time.Second)); res != ResUsers {
		t.Errorf("due %q, want users (5s)", res)
	}
	s.failed(ResTeams, t0.Add(10*time.Second))
	if got := s.next(ResTeams); !got.Equal(t0.Add(10*time.Second + failedRetry)) {
		t.Errorf("failed teams due at %v, want %v later", got.Sub(t0), failedRetry)
	}
	s.failed(ResUsers, t0.Add(10*time.Second))
	if got := s.next(ResUsers); !got.Equal(t0.Add(12 * time.Second)) {
		t.Errorf("failed users due at %v, want its 2s interval later", got.Sub(t0))
	}
	s.ran(ResTeams, t0.Add(15*time.Second), 1)
	if got := s.next(ResTeams); !got.Equal(t0.Add(75 * time.Second)) {
		t.Errorf("teams after a good cycle due at %v, want 75s", got.Sub(t0))
	}
}

// The cost is the mean of the last costCycles cycles: one retry moves it by
// 1/costCycles, a lasting change is followed in full after that many cycles.
func TestScheduleCost(t *testing.T) {
	s := newSchedule([]string{ResUsers})
	if got := s.cost()[ResUsers]; got != 1 {
		t.Errorf("cost before any cycle %v, want 1", got)
	}
	for range costCycles - 1 {
		s.ran(ResUsers, t0, 1)
	}
	s.ran(ResUsers, t0, 2) // a retry
	if got, want := s.cost()[ResUsers], 1+1.0/costCycles; got != want {
		t.Errorf("cost after one retry %v, want %v", got, want)
	}
	s.ran(ResUsers, t0, 0) // no request (counts as 1)
	for range costCycles {
		s.ran(ResUsers, t0, 3)
	}
	if got := s.cost()[ResUsers]; got != 3 {
		t.Errorf("cost after %d cycles of 3 %v, want 3", costCycles, got)
	}
}

// A cycle that began late (it waited for another cycle to end) keeps its turn,
// so its resource runs as often as planned; one that began an interval late or
// more, or after a failure, counts from its start: nothing runs twice to catch up.
func TestScheduleTurns(t *testing.T) {
	s := newSchedule([]string{ResUsers})
	s.ran(ResUsers, t0, 1)
	s.setIntervals(map[string]time.Duration{ResUsers: 4 * time.Second}, t0)
	s.ran(ResUsers, t0.Add(4300*time.Millisecond), 1) // due at 4 s, began 0.3 s late
	if got := s.next(ResUsers); !got.Equal(t0.Add(8 * time.Second)) {
		t.Errorf("after a late start due at %v, want 8s", got.Sub(t0))
	}
	s.ran(ResUsers, t0.Add(13*time.Second), 1) // due at 8 s, began 5 s late
	if got := s.next(ResUsers); !got.Equal(t0.Add(17 * time.Second)) {
		t.Errorf("after a start an interval late due at %v, want 17s", got.Sub(t0))
	}
	s.failed(ResUsers, t0.Add(17*time.Second))         // retry at 21 s
	s.ran(ResUsers, t0.Add(21500*time.Millisecond), 1) // the retry, 0.5 s late
	if got := s.next(ResUsers); !got.Equal(t0.Add(25500 * time.Millisecond)) {
		t.Errorf("after a retry due at %v, want 25.5s", got.Sub(t0))
	}
}
