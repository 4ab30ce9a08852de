package cursor

import (
	"maps"
	"slices"
	"testing"
	"time"
)

// ReadCallsCycle answers, in one round trip, what Cursors, OpenCalls and
// AllSnapshots answer apart: on an empty account, then after a commit, for a
// kind kept in one hash and for a bucketed one.
func TestReadCallsCycleMatchesTheReadsApart(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	empty, err := e.store.ReadCallsCycle(ctx, "call.parts")
	if err != nil {
		t.Fatal(err)
	}
	if len(empty.Cursors) != 0 || len(empty.Open) != 0 || empty.Stored {
		t.Fatalf("ReadCallsCycle on an empty account = %+v, want nothing", empty)
	}
	if _, err := e.store.ReadCallsCycle(ctx, "no kind"); err == nil {
		t.Error("ReadCallsCycle of an invalid kind: no error")
	}

	l := mustAcquire(t, e.store, "h", time.Minute)
	created := time.UnixMilli(1_714_557_600_123)
	mustCommit(t, e.store, l, Batch{
		Snapshots: []Snapshot{{Kind: "call.parts", ID: "812", Data: []byte(`{"id":812}`)}, {Kind: "call", ID: "813", Data: []byte("x")}},
		Open:      []Tracked{{ID: "813", At: created.Add(time.Second)}, {ID: "812", At: created}},
		Cursors:   map[string]string{"calls.high_water": "2024-05-01T10:00:00Z", "epoch": "e1"},
	})
	got, err := e.store.ReadCallsCycle(ctx, "call.parts")
	if err != nil {
		t.Fatal(err)
	}
	cur, err := e.store.Cursors(ctx)
	if err != nil {
		t.Fatal(err)
	}
	open, err := e.store.OpenCalls(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(got.Cursors, cur) {
		t.Errorf("Cursors = %v, want %v", got.Cursors, cur)
	}
	if !slices.EqualFunc(got.Open, open, func(a, b Tracked) bool { return a.ID == b.ID && a.At.Equal(b.At) }) || len(open) != 2 {
		t.Errorf("Open = %+v, want %+v", got.Open, open)
	}
	if !got.Stored {
		t.Error("Stored = false with a call.parts snapshot stored")
	}
	// "call" is bucketed (DefaultPruneKinds): its snapshots are in the buckets.
	if c, err := e.store.ReadCallsCycle(ctx, "call"); err != nil || !c.Stored {
		t.Errorf("ReadCallsCycle(call) = %+v, %v: want Stored, a call snapshot being in a bucket", c, err)
	}
	if c, err := e.store.ReadCallsCycle(ctx, "user"); err != nil || c.Stored {
		t.Errorf("ReadCallsCycle(user) = %+v, %v: want no snapshot stored", c, err)
	}
}
