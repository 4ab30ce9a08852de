package poll

import (
	"testing"
	"time"

	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/diff"
	"github.com/callbus/callbus/internal/sim"
	"github.com/callbus/callbus/internal/testkit/redistest"
	"github.com/redis/go-redis/v9"
)

// A state written by the previous release survives the upgrade: Redis is turned
// into what that release kept (every call and metric snapshot as JSON in one hash
// per kind, the terminal calls in a sorted set, no buckets), and the new code
// polls on from it: nothing is announced again while the world stands still, and
// what happens next is announced once.
func TestUpgradeFromPreviousRelease(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	store, err := cursor.New(rdb, "acme")
	if err != nil {
		t.Fatal(err)
	}
	p, s := newPollerOn(t, store, sim.Config{Agents: 8, CallRate: 4, Backlog: 40}, everything, nil)
	for i := range 16 {
		step := time.Minute
		if i%4 == 3 {
			step = time.Hour // so that the first calls settle and leave the open set
		}
		s.Advance(step)
		pollAll(t, p)
	}
	downgrade(t, rdb, store)
	n, err := store.OutboxLen(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	pollAll(t, p)
	if again, _ := store.OutboxLen(t.Context()); again != n {
		t.Fatalf("the upgrade announced %d events on a world standing still", again-n)
	}
	for range 10 {
		s.Advance(time.Minute)
		pollAll(t, p)
	}
	pollAll(t, p)
	got, st := outboxTypes(t, store), s.Stats()
	if got["call.created"] != st.Calls || got["call.ended"] != st.CallsEnded || got["metric.finalized"] > st.MetricsFinalized {
		t.Errorf("events %v; the world %+v", got, st)
	}
}

// downgrade rewrites the account's call and metric snapshots and terminal calls
// in the previous release's layout and encoding.
func downgrade(t *testing.T, rdb *redis.Client, store *cursor.Store) {
	t.Helper()
	ctx, p := t.Context(), store.KeyPrefix()
	open, err := store.OpenCalls(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	term, err := store.TerminalCalls(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range append(open, term...) {
		ids = append(ids, c.ID)
	}
	snaps := map[string]map[string][]byte{}
	for _, kind := range []string{"call", "metric"} {
		if snaps[kind], err = store.GetSnapshots(ctx, kind, ids); err != nil {
			t.Fatal(err)
		}
	}
	keys, err := rdb.Keys(ctx, p+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if rest := k[len(p):]; rest == "tb" || rest == "snap:call" || rest == "snap:metric" || len(rest) > 2 && (rest[:2] == "s:" || rest[:2] == "t:" || rest[:3] == "sb:") {
			rdb.Del(ctx, k)
		}
	}
	for kind, m := range snaps {
		for id, snap := range m {
			old, err := diff.SnapshotJSON(kind, snap)
			if err != nil {
				t.Fatal(err)
			}
			rdb.HSet(ctx, p+"snap:"+kind, id, old)
		}
	}
	for _, c := range term {
		rdb.ZAdd(ctx, p+"terminal", redis.Z{Score: float64(c.At.UnixMilli()), Member: c.ID})
	}
	if n, _ := rdb.HLen(ctx, p+"snap:call").Result(); n == 0 || n != int64(len(snaps["call"])) {
		t.Fatalf("downgraded %d call snapshots of %d", n, len(snaps["call"]))
	}
	if len(term) == 0 {
		t.Fatal("no terminal call to downgrade")
	}
	t.Logf("downgraded %d call and %d metric snapshots, %d terminal and %d open calls", len(snaps["call"]), len(snaps["metric"]), len(term), len(open))
}
