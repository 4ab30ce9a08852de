package cursor

import (
	"errors"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func TestPrune(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	l := mustAcquire(t, e.store, "a", time.Minute)
	now := time.UnixMilli(1_714_557_600_000)
	horizon := now.Add(-90 * time.Minute)

	var b Batch
	for _, id := range []string{"t3h", "t2h", "t1h", "open-old"} {
		for _, kind := range []string{"call", "metric", "user"} {
			b.Snapshots = append(b.Snapshots, Snapshot{Kind: kind, ID: id, Data: []byte(id)})
		}
	}
	b.Terminal = []Tracked{
		{ID: "t3h", At: now.Add(-3 * time.Hour)},
		{ID: "t2h", At: now.Add(-2 * time.Hour)},
		{ID: "t1h", At: now.Add(-time.Hour)},
	}
	b.Open = []Tracked{{ID: "open-old", At: now.Add(-10 * time.Hour)}}
	mustCommit(t, e.store, l, b)

	if n, err := e.store.Prune(ctx, l, horizon, 1); err != nil || n != 1 {
		t.Fatalf("Prune(limit 1) = %d %v, want 1", n, err)
	}
	if n, err := e.store.Prune(ctx, l, horizon, 10); err != nil || n != 1 {
		t.Fatalf("Prune(limit 10) = %d %v, want the 1 left before the horizon", n, err)
	}
	if n, err := e.store.Prune(ctx, l, horizon, 10); err != nil || n != 0 {
		t.Fatalf("Prune again = %d %v, want 0", n, err)
	}

	term, _ := e.store.TerminalCalls(ctx, 0)
	if len(term) != 1 || term[0].ID != "t1h" {
		t.Errorf("terminal after prune = %+v, want t1h only", term)
	}
	if open, _ := e.store.OpenCalls(ctx, 0); len(open) != 1 || open[0].ID != "open-old" {
		t.Errorf("open after prune = %+v, want open-old kept", open)
	}
	ids := []string{"t3h", "t2h", "t1h", "open-old"}
	for kind, want := range map[string][]string{
		"call":   {"open-old", "t1h"},
		"metric": {"open-old", "t1h"},
		"user":   {"open-old", "t1h", "t2h", "t3h"}, // not a prune kind
	} {
		got, err := e.store.GetSnapshots(ctx, kind, ids)
		if err != nil {
			t.Fatal(err)
		}
		have := slices.Sorted(maps.Keys(got))
		if !slices.Equal(have, want) {
			t.Errorf("%s snapshots after prune = %v, want %v", kind, have, want)
		}
	}
}

func TestPruneFenced(t *testing.T) {
	e := newEnv(t, WithPruneKinds("call"))
	ctx := ctxT(t)
	a := mustAcquire(t, e.store, "a", time.Minute)
	mustCommit(t, e.store, a, Batch{
		Snapshots: []Snapshot{{Kind: "call", ID: "1", Data: []byte("x")}},
		Terminal:  []Tracked{{ID: "1", At: time.UnixMilli(1000)}},
	})
	if err := e.store.Release(ctx, a); err != nil {
		t.Fatal(err)
	}
	b := mustAcquire(t, e.store, "b", time.Minute)
	before := dump(t, e.rdb, e.store)
	if _, err := e.store.Prune(ctx, a, time.Now(), 10); !errors.Is(err, ErrStaleLeader) {
		t.Fatalf("Prune by the old leader = %v, want ErrStaleLeader", err)
	}
	sameDump(t, "refused prune", before, dump(t, e.rdb, e.store))
	if n, err := e.store.Prune(ctx, b, time.Now(), 10); err != nil || n != 1 {
		t.Fatalf("Prune by the leader = %d %v, want 1", n, err)
	}
	if _, err := e.store.Prune(ctx, b, time.Now(), 0); !errors.Is(err, ErrInvalid) {
		t.Fatalf("Prune(limit 0) = %v, want ErrInvalid", err)
	}
}

// Terminal buckets written by earlier releases hold ends in ms, this release's
// in whole seconds: both are read as the same instant, and pruned by it, also
// when one bucket holds both.
func TestTerminalEndsInMsFromEarlierReleases(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	l := mustAcquire(t, e.store, "a", time.Minute)
	now := time.UnixMilli(1_714_557_600_000)
	mustCommit(t, e.store, l, Batch{
		Snapshots: []Snapshot{{Kind: "call", ID: "1", Data: []byte("a")}, {Kind: "call", ID: "2", Data: []byte("b")}},
		Terminal:  []Tracked{{ID: "1", At: now.Add(-time.Hour)}},
	})
	// Call 2 ended two hours ago, as an earlier release wrote it: ms, in the
	// same bucket, with tb's score left at the bucket's earliest end.
	p := e.store.KeyPrefix()
	old := now.Add(-2 * time.Hour).UnixMilli()
	if err := e.rdb.HSet(ctx, p+"t:0", "2", old).Err(); err != nil {
		t.Fatal(err)
	}
	if err := e.rdb.ZAdd(ctx, p+"tb", redis.Z{Score: float64(old), Member: "0"}).Err(); err != nil {
		t.Fatal(err)
	}
	term, err := e.store.TerminalCalls(ctx, 0)
	if err != nil || len(term) != 2 || term[0].ID != "2" || term[0].At.UnixMilli() != old || !term[1].At.Equal(now.Add(-time.Hour)) {
		t.Fatalf("TerminalCalls = %+v %v: want 2 at its ms, then 1", term, err)
	}
	if n, err := e.store.Prune(ctx, l, now.Add(-90*time.Minute), 10); err != nil || n != 1 {
		t.Fatalf("Prune = %d %v, want the call of two hours ago only", n, err)
	}
	if s, err := e.rdb.ZScore(ctx, p+"tb", "0").Result(); err != nil || int64(s) != now.Add(-time.Hour).UnixMilli() {
		t.Errorf("tb score of the bucket after the prune = %v %v, want call 1's end in ms", s, err)
	}
	if n, err := e.store.Prune(ctx, l, now, 10); err != nil || n != 1 {
		t.Fatalf("Prune later = %d %v, want call 1", n, err)
	}
}
