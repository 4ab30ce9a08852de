package cursor

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Snapshots of calls with numeric ids live in buckets of 128 ids, each a hash
// that stays a listpack; every reader finds them.
func TestBuckets(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	l := mustAcquire(t, e.store, "a", time.Minute)
	ids := []string{"0", "5", "127", "128", "100000000", "100000127", "x-1", "007"}
	var b Batch
	for _, id := range ids {
		b.Snapshots = append(b.Snapshots, Snapshot{Kind: "call", ID: id, Data: []byte("c" + id)},
			Snapshot{Kind: "user", ID: id, Data: []byte("u" + id)})
	}
	mustCommit(t, e.store, l, b)
	got, err := e.store.GetSnapshots(ctx, "call", append(ids, "1", "129"))
	if err != nil || len(got) != len(ids) {
		t.Fatalf("GetSnapshots = %v %v", got, err)
	}
	for _, id := range ids {
		if string(got[id]) != "c"+id {
			t.Errorf("snapshot %s = %q", id, got[id])
		}
	}
	all := map[string]string{}
	for sn, err := range e.store.AllSnapshots(ctx, "call") {
		if err != nil {
			t.Fatal(err)
		}
		all[sn.ID] = string(sn.Data)
	}
	if have := slices.Sorted(maps.Keys(all)); !slices.Equal(have, slices.Sorted(slices.Values(ids))) {
		t.Errorf("AllSnapshots ids = %v, want %v", have, ids)
	}
	if n, err := e.store.SnapshotCount(ctx, "call"); err != nil || n != int64(len(ids)) {
		t.Errorf("SnapshotCount = %d %v", n, err)
	}
	p := e.store.KeyPrefix()
	for key, want := range map[string]string{p + "s:call:0": "listpack", p + "s:call:3125000": "listpack", p + "sb:call": "intset"} {
		if enc, err := e.rdb.ObjectEncoding(ctx, key).Result(); err != nil || enc != want {
			t.Errorf("OBJECT ENCODING %s = %q %v, want %s", key, enc, err, want)
		}
	}
	if n, _ := e.rdb.HLen(ctx, p+"snap:call").Result(); n != 2 { // "x-1" and "007"
		t.Errorf("single hash holds %d, want the 2 ids that are not bucketed", n)
	}
	if n, _ := e.rdb.HLen(ctx, p+"snap:user").Result(); n != int64(len(ids)) {
		t.Errorf("users are not a prune kind: %d in their hash, want %d", n, len(ids))
	}
	mustCommit(t, e.store, l, Batch{Deletes: []Ref{{Kind: "call", ID: "128"}, {Kind: "call", ID: "x-1"}}})
	if got, _ := e.store.GetSnapshots(ctx, "call", []string{"128", "x-1", "127"}); len(got) != 1 {
		t.Errorf("after deletes: %v, want 127 only", slices.Sorted(maps.Keys(got)))
	}
}

// A snapshot is cut into chunks of at most 63 bytes (within a listpack value), up
// to 4; a longer one lives in the single hash, and moves back to its bucket once
// short enough again: one copy, no chunk left over, buckets stay listpacks.
func TestBucketChunks(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	l := mustAcquire(t, e.store, "a", time.Minute)
	p := e.store.KeyPrefix()
	ids := []string{"4", "5", "6"}
	for _, id := range ids {
		mustCommit(t, e.store, l, Batch{Snapshots: []Snapshot{{Kind: "call", ID: id, Data: []byte(id)}}})
	}
	for _, size := range []int{200, 10, 253, 63, 64, 252} {
		data := strings.Repeat("L", size-1) + "!"
		mustCommit(t, e.store, l, Batch{Snapshots: []Snapshot{{Kind: "call", ID: "5", Data: []byte(data)}}})
		got, _ := e.store.GetSnapshots(ctx, "call", []string{"5"})
		fields, _ := e.rdb.HKeys(ctx, p+"s:call:0").Result()
		chunks := slices.DeleteFunc(fields, func(f string) bool { return f != "5" && !strings.HasPrefix(f, "5.") })
		inSingle, _ := e.rdb.HExists(ctx, p+"snap:call", "5").Result()
		wantChunks := (size + 62) / 63
		if size > 252 {
			wantChunks = 0
		}
		if string(got["5"]) != data || len(chunks) != wantChunks || inSingle != (size > 252) {
			t.Errorf("%d bytes: read %d, chunks %v, in single hash %v", size, len(got["5"]), chunks, inSingle)
		}
	}
	all := map[string]string{}
	for sn, err := range e.store.AllSnapshots(ctx, "call") {
		if err != nil {
			t.Fatal(err)
		}
		all[sn.ID] = string(sn.Data)
	}
	if len(all["5"]) != 252 || len(all) != len(ids) {
		t.Errorf("AllSnapshots after chunking: %d ids, 5 of %d bytes", len(all), len(all["5"]))
	}
	if n, err := e.store.SnapshotCount(ctx, "call"); err != nil || n != int64(len(ids)) {
		t.Errorf("SnapshotCount with chunks = %d %v", n, err)
	}
	if enc, _ := e.rdb.ObjectEncoding(ctx, p+"s:call:0").Result(); enc != "listpack" {
		t.Errorf("bucket encoding %s after a long snapshot, want listpack", enc)
	}
	mustCommit(t, e.store, l, Batch{Deletes: []Ref{{Kind: "call", ID: "5"}}})
	if got, _ := e.store.GetSnapshots(ctx, "call", ids); len(got) != 2 || got["5"] != nil {
		t.Errorf("after deleting the long snapshot: %v", slices.Sorted(maps.Keys(got)))
	}
	if fields, _ := e.rdb.HKeys(ctx, p+"s:call:0").Result(); len(fields) != 2 {
		t.Errorf("chunks left in the bucket after the delete: %v", fields)
	}
}

// The terminal index of numeric ids lives in buckets too; prune still takes the
// earliest ended first across buckets and the sorted set, never an open call.
func TestTerminalBucketsPrune(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	l := mustAcquire(t, e.store, "a", time.Minute)
	at := func(min int) time.Time {
		return time.UnixMilli(1_714_557_600_000).Add(time.Duration(min) * time.Minute)
	}
	var b Batch
	// ends: id 1000+k ended at minute 100-k for k < 300 (later ids ended earlier),
	// across three buckets, plus "legacy-*" in the sorted set at minutes 5 and 250.
	for k := range 300 {
		id := strconv.Itoa(1000 + k)
		b.Snapshots = append(b.Snapshots, Snapshot{Kind: "call", ID: id, Data: []byte(id)}, Snapshot{Kind: "metric", ID: id, Data: []byte(id)})
		b.Terminal = append(b.Terminal, Tracked{ID: id, At: at(300 - k)})
	}
	b.Terminal = append(b.Terminal, Tracked{ID: "legacy-5", At: at(5)}, Tracked{ID: "legacy-250", At: at(250)})
	mustCommit(t, e.store, l, b)
	mustCommit(t, e.store, l, Batch{Open: []Tracked{{ID: "1299", At: at(0)}}}) // reopened: ended at minute 1 no more
	term, err := e.store.TerminalCalls(ctx, 5)
	var firsts []string
	for _, x := range term {
		firsts = append(firsts, x.ID)
	}
	if err != nil || !slices.Equal(firsts, []string{"1298", "1297", "1296", "1295", "legacy-5"}) {
		t.Fatalf("TerminalCalls(5) = %v %v", firsts, err)
	}
	if c, err := e.store.Counts(ctx); err != nil || c.Terminal != 301 || c.Open != 1 || c.Snapshots["call"] != 300 {
		t.Fatalf("Counts = %+v %v", c, err)
	}
	// Horizon at minute 100: ends 2..99 (ids 1201..1298) and legacy-5 go, 99 in all.
	n, err := e.store.Prune(ctx, l, at(100), 50)
	if err != nil || n != 50 {
		t.Fatalf("Prune(50) = %d %v", n, err)
	}
	left, _ := e.store.TerminalCalls(ctx, 0)
	if left[0].At != at(51) || slices.ContainsFunc(left, func(x Tracked) bool { return x.ID == "legacy-5" }) {
		t.Fatalf("after pruning 50 the earliest is %+v, want ended at minute 51", left[0])
	}
	if n, err = e.store.Prune(ctx, l, at(100), 100); err != nil || n != 49 {
		t.Fatalf("Prune(100) = %d %v, want the 49 left before the horizon", n, err)
	}
	if n, err = e.store.Prune(ctx, l, at(100), 100); err != nil || n != 0 {
		t.Fatalf("Prune again = %d %v", n, err)
	}
	got, _ := e.store.GetSnapshots(ctx, "metric", []string{"1298", "1200", "1299"})
	if have := slices.Sorted(maps.Keys(got)); !slices.Equal(have, []string{"1200", "1299"}) {
		t.Errorf("metrics after prune: %v, want 1200 (ended at 100) and the open 1299", have)
	}
	if open, _ := e.store.OpenCalls(ctx, 0); len(open) != 1 || open[0].ID != "1299" {
		t.Errorf("open = %+v", open)
	}
	if c, _ := e.store.Counts(ctx); c.Terminal != 202 {
		t.Errorf("terminal left = %d, want 202", c.Terminal)
	}
}

// A state written by the previous release (every snapshot of a kind in one hash,
// the terminal calls in a sorted set) is read, pruned and moved into the buckets
// as its entities change: nothing is lost or seen twice.
func TestUpgradeFromSingleHashes(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	l := mustAcquire(t, e.store, "a", time.Minute)
	p := e.store.KeyPrefix()
	// As the previous release's commit.lua wrote them.
	e.rdb.HSet(ctx, p+"snap:call", "500", "old-500", "501", "old-501", "502", "old-502")
	e.rdb.HSet(ctx, p+"snap:metric", "500", "m-500")
	e.rdb.SAdd(ctx, p+"kinds", "call", "metric")
	e.rdb.ZAdd(ctx, p+"terminal", redisZ(1000, "500"), redisZ(3000, "501"))
	e.rdb.ZAdd(ctx, p+"open", redisZ(10, "502"))

	got, err := e.store.GetSnapshots(ctx, "call", []string{"500", "501", "502"})
	if err != nil || len(got) != 3 || string(got["501"]) != "old-501" {
		t.Fatalf("old snapshots read as %v %v", got, err)
	}
	// 501 changes: its new snapshot goes to its bucket and leaves the hash.
	mustCommit(t, e.store, l, Batch{Snapshots: []Snapshot{{Kind: "call", ID: "501", Data: []byte("new-501")}},
		Terminal: []Tracked{{ID: "502", At: time.UnixMilli(2000)}}})
	got, _ = e.store.GetSnapshots(ctx, "call", []string{"500", "501", "502"})
	if string(got["501"]) != "new-501" || string(got["500"]) != "old-500" {
		t.Fatalf("after the change: %v", got)
	}
	if ok, _ := e.rdb.HExists(ctx, p+"snap:call", "501").Result(); ok {
		t.Error("the changed snapshot stayed in the single hash")
	}
	n := 0
	for _, err := range e.store.AllSnapshots(ctx, "call") {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 3 {
		t.Errorf("AllSnapshots saw %d, want 3", n)
	}
	term, _ := e.store.TerminalCalls(ctx, 0)
	if len(term) != 3 || term[0].ID != "500" || term[1].ID != "502" || term[2].ID != "501" {
		t.Fatalf("terminal = %+v, want 500, 502, 501", term)
	}
	if n, err := e.store.Prune(ctx, l, time.UnixMilli(2500), 10); err != nil || n != 2 {
		t.Fatalf("Prune = %d %v, want 500 (old index) and 502 (bucket)", n, err)
	}
	got, _ = e.store.GetSnapshots(ctx, "call", []string{"500", "501", "502"})
	if len(got) != 1 || string(got["501"]) != "new-501" {
		t.Errorf("after prune: %v", got)
	}
	if m, _ := e.store.GetSnapshots(ctx, "metric", []string{"500"}); len(m) != 0 {
		t.Errorf("old metric of a pruned call kept: %v", m)
	}
}

// A read that found a kind's single hash gone asks only whether it came back; an
// earlier release that writes there again in a rolling upgrade (after the last
// read) is read, and its copy wins as before.
func TestSingleHashBackAfterItWasGone(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	l := mustAcquire(t, e.store, "a", time.Minute)
	p := e.store.KeyPrefix()
	mustCommit(t, e.store, l, Batch{Snapshots: []Snapshot{{Kind: "call", ID: "700", Data: []byte("bucket-700")}}})
	for range 2 { // the first finds the single hash absent, the second skips it
		got, err := e.store.GetSnapshots(ctx, "call", []string{"700", "701"})
		if err != nil || len(got) != 1 || string(got["700"]) != "bucket-700" {
			t.Fatalf("read %v %v", got, err)
		}
	}
	e.rdb.HSet(ctx, p+"snap:call", "700", "old-700", "701", "old-701") // the previous release's commit
	for range 2 {
		got, err := e.store.GetSnapshots(ctx, "call", []string{"700", "701"})
		if err != nil || string(got["700"]) != "old-700" || string(got["701"]) != "old-701" {
			t.Fatalf("after an earlier release wrote the single hash: %v %v", got, err)
		}
	}
	e.rdb.Del(ctx, p+"snap:call")
	if got, _ := e.store.GetSnapshots(ctx, "call", []string{"700", "701"}); len(got) != 1 || string(got["700"]) != "bucket-700" {
		t.Fatalf("after the single hash emptied: %v", got)
	}
}
