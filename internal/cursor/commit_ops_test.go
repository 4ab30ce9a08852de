package cursor

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A batch's writes are grouped by key (commit_ops.go): several snapshots of one
// entity in a batch leave the last, a delete of an entity the batch writes is
// undone by the write, shorter snapshots leave no chunk behind, and the reads of
// many ids of one bucket (HGETALL) and of a few (HMGET) agree.
func TestCommitGroupedSnapshots(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	l := mustAcquire(t, e.store, "a", time.Minute)
	p := e.store.KeyPrefix()
	data := func(id string, size int) []byte {
		return []byte(strings.Repeat(id[len(id)-1:], size-1) + "!")
	}
	want := map[string]string{}
	var b Batch
	for i := range 32 {
		id := strconv.Itoa(i)
		size := []int{1, 63, 64, 200, 252, 253, 400}[i%7]
		b.Snapshots = append(b.Snapshots, Snapshot{Kind: "call", ID: id, Data: data(id, size)})
		want[id] = string(data(id, size))
	}
	// 3: long then short, 4: short then long; 5 deleted but written; 40 deleted,
	// its bucket emptied.
	b.Snapshots = append(b.Snapshots, Snapshot{Kind: "call", ID: "3", Data: data("3", 10)},
		Snapshot{Kind: "call", ID: "4", Data: data("4", 300)})
	want["3"], want["4"] = string(data("3", 10)), string(data("4", 300))
	b.Deletes = []Ref{{Kind: "call", ID: "5"}, {Kind: "call", ID: "40"}}
	mustCommit(t, e.store, l, Batch{Snapshots: []Snapshot{{Kind: "call", ID: "40", Data: data("40", 100)}}})
	mustCommit(t, e.store, l, b)
	ids := slices.Collect(maps.Keys(want))
	check := func(when string) {
		t.Helper()
		got, err := e.store.GetSnapshots(ctx, "call", append(ids, "40"))
		if err != nil || len(got) != len(want) {
			t.Fatalf("%s: GetSnapshots = %d snapshots %v, want %d", when, len(got), err, len(want))
		}
		for id, w := range want {
			if string(got[id]) != w {
				t.Errorf("%s: snapshot %s = %d bytes, want %d", when, id, len(got[id]), len(w))
			}
			one, _ := e.store.GetSnapshots(ctx, "call", []string{id})
			if string(one[id]) != w {
				t.Errorf("%s: snapshot %s read alone = %d bytes, want %d", when, id, len(one[id]), len(w))
			}
		}
	}
	check("first batch")
	if n, _ := e.rdb.Exists(ctx, p+"s:call:1").Result(); n != 0 {
		t.Errorf("the bucket of the deleted snapshot 40 still exists")
	}
	if ok, _ := e.rdb.SIsMember(ctx, p+"sb:call", "1").Result(); ok {
		t.Errorf("the emptied bucket 1 is still in the bucket set")
	}
	// Everything shorter: no chunk of the longer ones stays.
	b = Batch{}
	for _, id := range ids {
		b.Snapshots = append(b.Snapshots, Snapshot{Kind: "call", ID: id, Data: data(id, 2)})
		want[id] = string(data(id, 2))
	}
	mustCommit(t, e.store, l, b)
	check("all short")
	if n, _ := e.rdb.HLen(ctx, p+"s:call:0").Result(); n != int64(len(ids)) {
		t.Errorf("bucket holds %d fields, want one per snapshot (%d)", n, len(ids))
	}
	if n, _ := e.rdb.Exists(ctx, p+"snap:call").Result(); n != 0 {
		t.Errorf("single hash still exists after every snapshot moved back to its bucket")
	}
	mustCommit(t, e.store, l, Batch{Deletes: refsOf(b.Snapshots)})
	if n, _ := e.rdb.Exists(ctx, p+"s:call:0", p+"sb:call").Result(); n != 0 {
		t.Errorf("%d of the bucket and its bucket set left after deleting every snapshot", n)
	}
}

// One commit of more calls than one script command takes (opArgsMax): every
// call is open, then terminal, each terminal bucket scored by its earliest end,
// which a later batch of later ends leaves.
func TestCommitGroupedCalls(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	l := mustAcquire(t, e.store, "a", time.Minute)
	p := e.store.KeyPrefix()
	at := time.UnixMilli(1_714_557_600_000)
	const n = 1500
	var open, ended []Tracked
	for i := range n {
		open = append(open, Tracked{ID: strconv.Itoa(i), At: at})
		ended = append(ended, Tracked{ID: strconv.Itoa(i), At: at.Add(time.Duration(n-i) * time.Millisecond)})
	}
	ended = append(ended, Tracked{ID: "x-1", At: at})
	mustCommit(t, e.store, l, Batch{Open: open})
	if c, _ := e.rdb.ZCard(ctx, p+"open").Result(); c != n {
		t.Fatalf("open holds %d calls, want %d", c, n)
	}
	mustCommit(t, e.store, l, Batch{Terminal: ended})
	if c, _ := e.rdb.ZCard(ctx, p+"open").Result(); c != 0 {
		t.Errorf("open holds %d calls after they all ended", c)
	}
	if ids, _ := e.rdb.ZRange(ctx, p+"terminal", 0, -1).Result(); !slices.Equal(ids, []string{"x-1"}) {
		t.Errorf("terminal sorted set = %v, want the id that is not bucketed", ids)
	}
	// Bucket b holds ids 128b..128b+127: its earliest end is that of its last id,
	// in whole seconds rounded up (terminalEnd).
	first := func(b int) float64 {
		return float64(terminalEnd(at.Add(time.Duration(n-min(n-1, 128*b+127))*time.Millisecond)) * 1000)
	}
	for b := range (n + 127) / 128 {
		if s, err := e.rdb.ZScore(ctx, p+"tb", strconv.Itoa(b)).Result(); err != nil || s != first(b) {
			t.Errorf("tb score of bucket %d = %v %v, want %v", b, s, err, first(b))
		}
	}
	mustCommit(t, e.store, l, Batch{Terminal: []Tracked{{ID: "0", At: at.Add(time.Hour)}}})
	if s, _ := e.rdb.ZScore(ctx, p+"tb", "0").Result(); s != first(0) {
		t.Errorf("a later end moved bucket 0's score to %v, want %v", s, first(0))
	}
	if v, _ := e.rdb.HGet(ctx, p+"t:0", "0").Result(); v != strconv.FormatInt(at.Add(time.Hour).Unix(), 10) {
		t.Errorf("terminal bucket field of call 0 = %s", v)
	}
}

// Snapshots committed as New (nothing of the entity stored) skip the removal of
// an earlier snapshot's leftovers: their commit holds no HDEL, they read back
// whole wherever they are kept (bucket chunks or, too long, the single hash),
// and a later, shorter snapshot that is not New leaves none of their chunks.
// A New snapshot of an entity the batch also deletes, or also writes as not
// New, is cleaned up as any other.
func TestCommitNewSnapshots(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	l := mustAcquire(t, e.store, "a", time.Minute)
	sizes := []int{1, 63, 64, 252, 253, 400}
	var b Batch
	want := map[string]string{}
	for i, size := range sizes {
		id := strconv.Itoa(i)
		d := strings.Repeat(id, size)
		b.Snapshots = append(b.Snapshots, Snapshot{Kind: "call", ID: id, Data: []byte(d), New: true})
		want[id] = d
	}
	var o opList
	e.store.snapOps(&o, newKeySet(), b)
	for _, a := range o.args {
		if a == "HDEL" {
			t.Fatalf("the ops of New snapshots hold an HDEL: %v", o.args)
		}
	}
	mustCommit(t, e.store, l, b)
	check := func(when string) {
		t.Helper()
		ids := slices.Collect(maps.Keys(want))
		got, err := e.store.GetSnapshots(ctx, "call", ids)
		if err != nil || len(got) != len(want) {
			t.Fatalf("%s: GetSnapshots = %d snapshots %v, want %d", when, len(got), err, len(want))
		}
		for id, w := range want {
			if string(got[id]) != w {
				t.Errorf("%s: snapshot %s = %q, want %q", when, id, got[id], w)
			}
		}
	}
	check("new")
	b = Batch{}
	for i := range sizes {
		id := strconv.Itoa(i)
		b.Snapshots = append(b.Snapshots, Snapshot{Kind: "call", ID: id, Data: []byte("s" + id)})
		want[id] = "s" + id
	}
	mustCommit(t, e.store, l, b)
	check("shorter")

	// Wrongly New beside a delete or a write of the same entity: cleaned up.
	o = opList{}
	e.store.snapOps(&o, newKeySet(), Batch{
		Snapshots: []Snapshot{{Kind: "call", ID: "1", Data: []byte("a")}, {Kind: "call", ID: "1", Data: []byte("b"), New: true},
			{Kind: "call", ID: "2", Data: []byte("c"), New: true}},
		Deletes: []Ref{{Kind: "call", ID: "2"}}})
	if !slices.Contains(o.args, any("HDEL")) {
		t.Errorf("a New snapshot also written as not New, or deleted, left no HDEL: %v", o.args)
	}
}
