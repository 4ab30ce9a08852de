package fleet

import (
	"slices"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/testkit/redistest"
	"github.com/rs/zerolog"
)

// The membership records when each member joined (kept across heartbeats, set
// again after it expired) and when a member took each account it runs (kept while
// it runs it, replaced when another takes it); a member that leaves or expires
// takes its records with it.
func TestMembershipRecordsJoinsAndArrivals(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	newFleet := func(replica string, ttl time.Duration) *Fleet {
		f, err := New(rdb, replica, zerolog.Nop(), WithName(fleetName(t)), WithTTL(ttl))
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	a, b := newFleet("a", time.Minute), newFleet("b", 300*time.Millisecond)
	beat := func(f *Fleet, running ...string) ([]Member, map[string]arrival) {
		t.Helper()
		ms, arr, err := f.readMembers(t.Context(), true, running)
		if err != nil {
			t.Fatal(err)
		}
		return ms, arr
	}
	ms, arr := beat(a, "x", "y")
	if len(ms) != 1 || ms[0].Name != "a" || ms[0].Joined == 0 {
		t.Fatalf("after a's first beat: members %v", ms)
	}
	joinedA := ms[0].Joined
	if arr["x"].replica != "a" || arr["y"].replica != "a" || arr["x"].at < joinedA {
		t.Fatalf("a's arrivals: %v", arr)
	}
	tookX := arr["x"].at
	time.Sleep(20 * time.Millisecond)
	ms, arr = beat(b, "y")
	if len(ms) != 2 || ms[0] != (Member{"a", joinedA}) || ms[1].Name != "b" || ms[1].Joined <= joinedA {
		t.Fatalf("b joined later than a: %v", ms)
	}
	if arr["y"].replica != "b" || arr["y"].at <= tookX {
		t.Fatalf("b took y: %v", arr["y"])
	}
	ms, arr = beat(a, "x")
	if ms[0] != (Member{"a", joinedA}) || arr["x"] != (arrival{"a", tookX}) {
		t.Fatalf("a's second beat changed its records: %v %v", ms, arr["x"])
	}

	// b expires (no beat for its TTL): a's next beat forgets it and its arrival;
	// b beating again joins anew.
	time.Sleep(400 * time.Millisecond)
	ms, arr = beat(a, "x")
	if len(ms) != 1 || ms[0].Name != "a" {
		t.Fatalf("b expired, members %v", ms)
	}
	if _, ok := arr["y"]; ok {
		t.Fatalf("b's arrival kept after it expired: %v", arr)
	}
	if n, _ := rdb.HLen(t.Context(), joinedKey(fleetName(t))).Result(); n != 1 {
		t.Fatalf("joined holds %d members after b expired, want 1", n)
	}
	ms, _ = beat(b)
	if ms[1].Name != "b" || ms[1].Joined <= joinedA+400 {
		t.Fatalf("b back after expiring: %v, want joined anew", ms)
	}

	// a leaves: its membership, joined time and arrivals go.
	if err := a.leave(t.Context()); err != nil {
		t.Fatal(err)
	}
	ms, arr, err := b.readMembers(t.Context(), false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 1 || ms[0].Name != "b" || len(arr) != 0 {
		t.Fatalf("after a left: members %v, arrivals %v", ms, arr)
	}
	keys, _ := rdb.HKeys(t.Context(), joinedKey(fleetName(t))).Result()
	if !slices.Equal(keys, []string{"b"}) {
		t.Fatalf("joined after a left: %v", keys)
	}
}
