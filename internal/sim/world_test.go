package sim

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
	"time"
)

// snapshot is every list of the API, as JSON.
func snapshot(t *testing.T, s *Sim) string {
	t.Helper()
	var b bytes.Buffer
	for _, p := range []string{"/api/v1/users?per_page=1000", "/api/v1/teams?per_page=1000",
		"/api/v1/calls?per_page=1000", "/api/v1/call_metrics?per_page=1000&include=life_cycle"} {
		b.Write(get(t, s, p, 200).body)
	}
	return b.String()
}

func TestSameSeedSameWorldWhateverTheStepping(t *testing.T) {
	var truthA, truthB bytes.Buffer
	a := newTestSim(t, Config{Seed: 7, Truth: &truthA, Backlog: 50})
	b := newTestSim(t, Config{Seed: 7, Truth: &truthB, Backlog: 50})
	a.Advance(45 * time.Minute)
	for range 45 {
		b.Advance(time.Minute)
		b.Stats() // requests in between must not matter
	}
	if sa, sb := snapshot(t, a), snapshot(t, b); sa != sb {
		t.Fatalf("same seed, different worlds:\n%.400s\n%.400s", sa, sb)
	}
	_ = a.Close()
	_ = b.Close()
	if !bytes.Equal(truthA.Bytes(), truthB.Bytes()) {
		t.Fatal("same seed, different truth logs")
	}
	c := newTestSim(t, Config{Seed: 8, Backlog: 50})
	c.Advance(45 * time.Minute)
	if snapshot(t, a) == snapshot(t, c) {
		t.Fatal("different seeds gave the same world")
	}
}

func TestWorldMovesInOneMinute(t *testing.T) {
	var truth bytes.Buffer
	s := newTestSim(t, Config{Truth: &truth})
	before := s.Stats()
	s.Advance(time.Minute)
	after := s.Stats()
	if after.Calls <= before.Calls {
		t.Errorf("calls %d → %d after a minute, want new calls", before.Calls, after.Calls)
	}
	_ = s.Close()
	statusChanges := 0
	for _, l := range parseTruth(t, truth.Bytes()) {
		if l.Entity == entUser && l.Change == chStatusChanged && l.Field == "status" {
			statusChanges++
		}
	}
	if statusChanges == 0 {
		t.Error("no user status changed in a minute")
	}
}

// TestUserStatusFollowsCalls checks, minute by minute, that every user on a live leg
// is busy (2) and every user in after-call work and on no leg is in acw (3), and
// that both happen.
func TestUserStatusFollowsCalls(t *testing.T) {
	s := newTestSim(t, Config{CallRate: 4})
	var busy, acw int
	for range 120 {
		s.Advance(time.Minute)
		s.mu.Lock()
		w := s.w
		onLeg := map[int64]bool{}
		for _, c := range w.calls {
			for _, p := range c.parts {
				if p.agent != 0 && !Terminal(int(p.status)) {
					onLeg[p.agent] = true
				}
			}
		}
		for _, u := range w.users {
			switch {
			case onLeg[u.id]:
				busy++
				if u.status != 2 {
					t.Errorf("%s: user %d on a live leg has status %d, want 2", w.now.Time(), u.id, u.status)
				}
			case u.acw > 0:
				acw++
				if u.status != 3 {
					t.Errorf("%s: user %d in after-call work has status %d, want 3", w.now.Time(), u.id, u.status)
				}
			case u.status == 2 || u.status == 3:
				t.Errorf("%s: user %d has status %d with no call", w.now.Time(), u.id, u.status)
			}
		}
		s.mu.Unlock()
	}
	if busy == 0 || acw == 0 {
		t.Errorf("observed busy %d times, acw %d times; want both", busy, acw)
	}
}

// TestTruthAudit replays the truth log of two hours: lines are well formed and
// ordered, status chains are unbroken, every call ends at most once, every ended
// call's metric is finalized exactly once and after the end, and calls end only
// when every participant is terminal.
func TestTruthAudit(t *testing.T) {
	var truth bytes.Buffer
	s := newTestSim(t, Config{Truth: &truth, CallRate: 3})
	s.Advance(2 * time.Hour)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	lines := parseTruth(t, truth.Bytes())
	if len(lines) < 1000 {
		t.Fatalf("only %d truth lines in two hours", len(lines))
	}
	entities := []string{entCall, entParticipant, entUser, entTeam, entMetric, entJob}
	changes := []string{chCreated, chUpdated, chStatusChanged, chEnded, chDeleted, chFinalized, chJoined}
	last := map[string]string{} // entity/id/field → last "to"
	status := map[int64]int{}   // participant → call_status
	partsOf := map[int64][]int64{}
	ended := map[int64]time.Time{}
	finalized := map[int64]time.Time{}
	var prev time.Time
	for i, l := range lines {
		where := fmt.Sprintf("line %d (%+v)", i+1, l)
		if l.Time.Before(prev) {
			t.Fatalf("%s: time goes back from %s", where, prev)
		}
		prev = l.Time
		if !slices.Contains(entities, l.Entity) || !slices.Contains(changes, l.Change) || l.ID == 0 {
			t.Fatalf("%s: bad entity, change or id", where)
		}
		if (l.Entity == entParticipant || l.Entity == entMetric) != (l.CallID != 0) {
			t.Fatalf("%s: call_id must be set exactly for participants and metrics", where)
		}
		if l.Change == chStatusChanged || l.Change == chUpdated {
			key := fmt.Sprintf("%s/%d/%s", l.Entity, l.ID, l.Field)
			if l.Field == "" || l.From == nil || l.To == nil {
				t.Fatalf("%s: needs field, from and to", where)
			}
			if p, ok := last[key]; ok && p != string(l.From) {
				t.Fatalf("%s: from %s, but the previous to was %s", where, l.From, p)
			}
			last[key] = string(l.To)
		}
		switch {
		case l.Entity == entParticipant && l.Change == chJoined:
			if ended[l.CallID] != (time.Time{}) {
				t.Fatalf("%s: joined an ended call", where)
			}
			last[fmt.Sprintf("participant/%d/call_status", l.ID)] = string(l.To)
			var st int
			fmt.Sscan(string(l.To), &st)
			status[l.ID] = st
			partsOf[l.CallID] = append(partsOf[l.CallID], l.ID)
		case l.Entity == entParticipant && l.Field == "call_status":
			if Terminal(status[l.ID]) {
				t.Fatalf("%s: a terminal leg changed", where)
			}
			var st int
			fmt.Sscan(string(l.To), &st)
			status[l.ID] = st
		case l.Entity == entCall && l.Change == chEnded:
			if _, dup := ended[l.ID]; dup {
				t.Fatalf("%s: call ended twice", where)
			}
			for _, p := range partsOf[l.ID] {
				if !Terminal(status[p]) {
					t.Fatalf("%s: ended with participant %d in status %d", where, p, status[p])
				}
			}
			ended[l.ID] = l.Time
		case l.Entity == entMetric && l.Change == chFinalized:
			if _, dup := finalized[l.CallID]; dup {
				t.Fatalf("%s: metric finalized twice", where)
			}
			e, ok := ended[l.CallID]
			if !ok || !l.Time.After(e) {
				t.Fatalf("%s: finalized before the call ended (%v)", where, e)
			}
			finalized[l.CallID] = l.Time
		}
	}
	end := prev
	for id, at := range ended {
		if _, ok := finalized[id]; !ok && at.Before(end.Add(-10*time.Minute)) {
			t.Errorf("call %d ended at %s but its metric was never finalized", id, at)
		}
	}
	// Every call whose participants are all terminal has an ended line.
	for id, parts := range partsOf {
		all := true
		for _, p := range parts {
			all = all && Terminal(status[p])
		}
		if _, ok := ended[id]; all != ok {
			t.Errorf("call %d: all terminal %v, ended line %v", id, all, ok)
		}
	}
	if len(finalized) == 0 {
		t.Fatal("no metric finalized")
	}
}

func TestBacklog(t *testing.T) {
	s := newTestSim(t, Config{Backlog: 10_000, CallRate: -1})
	st := s.Stats()
	if st.Calls != 10_000 || st.CallsEnded != 10_000 || st.MetricsFinalized != 10_000 {
		t.Fatalf("stats %+v, want 10000 calls all ended and finalized", st)
	}
	r := get(t, s, "/api/v1/calls?per_page=1000&page=10", 200).obj(t)
	calls := r["calls"].([]any)
	if len(calls) != 1000 {
		t.Fatalf("page 10 has %d calls", len(calls))
	}
	meta := r["meta"].(map[string]any)
	if num(t, meta["total_count"]) != 10_000 || num(t, meta["total_pages"]) != 10 || num(t, meta["current"]) != 10 {
		t.Errorf("meta %v", meta)
	}
	for _, c := range calls {
		created, err := time.Parse(time.RFC3339, c.(map[string]any)["created_time"].(string))
		if err != nil || !created.Before(testStart.Add(-time.Hour).Add(time.Second)) {
			t.Fatalf("backlog call created %v (%v), want before start − 1h", created, err)
		}
	}
	m := get(t, s, "/api/v1/call_metrics?per_page=5&include=life_cycle", 200).obj(t)
	for _, x := range m["call_metrics"].([]any) {
		if lc := x.(map[string]any)["life_cycle"].([]any); len(lc) == 0 {
			t.Errorf("backlog metric without life_cycle: %v", x)
		}
	}
}
