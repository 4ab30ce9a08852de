package cursor

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/event"
)

func TestCommitWritesEverything(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	l := mustAcquire(t, e.store, "a", time.Minute)

	binary := []byte{0, 1, 2, 0xff, '\n', 0}
	created := time.UnixMilli(1_714_557_600_123)
	res := mustCommit(t, e.store, l, Batch{
		Snapshots: []Snapshot{
			{Kind: "call", ID: "812", Data: binary},
			{Kind: "call", ID: "813", Data: []byte("x")},
			{Kind: "user", ID: "7", Data: []byte("u7")},
			{Kind: "status_catalog", ID: "all", Data: []byte("cat")},
		},
		Open:    []Tracked{{ID: "812", At: created}, {ID: "813", At: created.Add(time.Second)}},
		Cursors: map[string]string{"calls.high_water": "2024-05-01T10:00:00Z", "order.calls": "desc"},
		Events: []event.Message{
			{ID: "e1", Subject: "callcenter.acme.call.created", Data: []byte(`{"n":1}`),
				Headers: map[string]string{"traceparent": "00-abc-def-01"}},
			{ID: "e2", Subject: "callcenter.acme.call.created", Data: []byte(`{"n":2}`)},
			{ID: "e3", Subject: "callcenter.acme.user.created", Data: []byte(`{"n":3}`)},
		},
	})
	if len(res.StreamIDs) != 3 {
		t.Fatalf("StreamIDs = %v, want 3", res.StreamIDs)
	}

	got, err := e.store.GetSnapshots(ctx, "call", []string{"812", "813", "999"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !bytes.Equal(got["812"], binary) || string(got["813"]) != "x" {
		t.Errorf("GetSnapshots(call) = %q, want 812 (binary) and 813, not 999", got)
	}
	if v, ok, err := e.store.GetCursor(ctx, "order.calls"); err != nil || !ok || v != "desc" {
		t.Errorf("GetCursor(order.calls) = %q %v %v, want desc", v, ok, err)
	}
	if _, ok, err := e.store.GetCursor(ctx, "missing"); err != nil || ok {
		t.Errorf("GetCursor(missing) = %v %v, want not set, no error", ok, err)
	}
	curs, err := e.store.Cursors(ctx)
	if err != nil || len(curs) != 2 || curs["calls.high_water"] != "2024-05-01T10:00:00Z" {
		t.Errorf("Cursors = %v %v", curs, err)
	}
	open, err := e.store.OpenCalls(ctx, 0)
	if err != nil || len(open) != 2 || open[0].ID != "812" || !open[0].At.Equal(created) || open[1].ID != "813" {
		t.Errorf("OpenCalls = %+v %v, want 812 then 813 with created times", open, err)
	}
	if first, _ := e.store.OpenCalls(ctx, 1); len(first) != 1 || first[0].ID != "812" {
		t.Errorf("OpenCalls(1) = %+v, want the oldest only", first)
	}

	recs, err := e.store.ReadOutbox(ctx, "", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 {
		t.Fatalf("ReadOutbox = %d records, want 3", len(recs))
	}
	for i, r := range recs {
		if r.StreamID != res.StreamIDs[i] || r.ID != fmt.Sprintf("e%d", i+1) || string(r.Data) != fmt.Sprintf(`{"n":%d}`, i+1) {
			t.Errorf("record %d = %+v, want e%d at %s", i, r, i+1, res.StreamIDs[i])
		}
	}
	if recs[0].Headers["traceparent"] != "00-abc-def-01" || recs[0].Subject != "callcenter.acme.call.created" || recs[1].Headers != nil {
		t.Errorf("headers/subject: %+v / %+v", recs[0], recs[1])
	}

	kinds, err := e.store.Kinds(ctx)
	if err != nil || !slices.Equal(kinds, []string{"call", "status_catalog", "user"}) {
		t.Errorf("Kinds = %v %v", kinds, err)
	}
	c, err := e.store.Counts(ctx)
	want := Counts{Snapshots: map[string]int64{"call": 2, "user": 1, "status_catalog": 1}, Open: 2, Cursors: 2, Outbox: 3}
	if err != nil || !maps.Equal(c.Snapshots, want.Snapshots) || c.Open != 2 || c.Terminal != 0 || c.Cursors != 2 || c.Outbox != 3 {
		t.Errorf("Counts = %+v %v, want %+v", c, err, want)
	}
	if n, err := e.store.SnapshotCount(ctx, "call"); err != nil || n != 2 {
		t.Errorf("SnapshotCount(call) = %d %v", n, err)
	}

	// The next step: 812 ends, 813's snapshot is deleted and a user rewritten.
	ended := created.Add(time.Minute)
	mustCommit(t, e.store, l, Batch{
		Snapshots: []Snapshot{{Kind: "user", ID: "7", Data: []byte("u7'")}},
		Deletes:   []Ref{{Kind: "call", ID: "813"}},
		Terminal:  []Tracked{{ID: "812", At: ended}},
		Events:    []event.Message{{ID: "e4", Subject: "callcenter.acme.call.ended"}},
	})
	open, _ = e.store.OpenCalls(ctx, 0)
	term, _ := e.store.TerminalCalls(ctx, 0)
	// A terminal call's end is kept in whole seconds, rounded up (terminalEnd).
	if len(open) != 1 || open[0].ID != "813" || len(term) != 1 || term[0].ID != "812" || !term[0].At.Equal(ended.Truncate(time.Second).Add(time.Second)) {
		t.Errorf("after ending 812: open %+v terminal %+v", open, term)
	}
	got, _ = e.store.GetSnapshots(ctx, "call", []string{"812", "813"})
	if _, ok := got["813"]; ok || len(got) != 1 {
		t.Errorf("after deleting 813: %q", got)
	}
	all := map[string]string{}
	for sn, err := range e.store.AllSnapshots(ctx, "user") {
		if err != nil {
			t.Fatal(err)
		}
		all[sn.ID] = string(sn.Data)
	}
	if !maps.Equal(all, map[string]string{"7": "u7'"}) {
		t.Errorf("AllSnapshots(user) = %v", all)
	}
	// Open again moves a call back out of the terminal index.
	mustCommit(t, e.store, l, Batch{Open: []Tracked{{ID: "812", At: created}}})
	if term, _ := e.store.TerminalCalls(ctx, 0); len(term) != 0 {
		t.Errorf("reopened 812 still terminal: %+v", term)
	}
}

func TestCommitOrderWithinBatch(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	l := mustAcquire(t, e.store, "a", time.Minute)
	mustCommit(t, e.store, l, Batch{
		Deletes:   []Ref{{Kind: "call", ID: "1"}},
		Snapshots: []Snapshot{{Kind: "call", ID: "1", Data: []byte("new")}},
		Open:      []Tracked{{ID: "1", At: time.UnixMilli(1)}},
		Terminal:  []Tracked{{ID: "1", At: time.UnixMilli(2)}},
	})
	got, _ := e.store.GetSnapshots(ctx, "call", []string{"1"})
	open, _ := e.store.OpenCalls(ctx, 0)
	term, _ := e.store.TerminalCalls(ctx, 0)
	if string(got["1"]) != "new" || len(open) != 0 || len(term) != 1 {
		t.Errorf("deleted+written: %q; open+terminal: open %v terminal %v; want written and terminal", got, open, term)
	}
}

func TestCommitOutboxOrderAcrossCommits(t *testing.T) {
	e := newEnv(t)
	l := mustAcquire(t, e.store, "a", time.Minute)
	var want []string
	for c := range 5 {
		var b Batch
		for i := range 7 {
			id := fmt.Sprintf("c%d-e%d", c, i)
			want = append(want, id)
			b.Events = append(b.Events, event.Message{ID: id, Subject: "s"})
		}
		mustCommit(t, e.store, l, b)
	}
	recs, err := e.store.ReadOutbox(ctxT(t), "", 100)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		got = append(got, r.ID)
	}
	if !slices.Equal(got, want) {
		t.Errorf("outbox order:\n got %v\nwant %v", got, want)
	}
}

// A commit refused for a stale lease writes nothing at all.
func TestCommitRefusedWritesNothing(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	a := mustAcquire(t, e.store, "a", time.Minute)
	mustCommit(t, e.store, a, fullBatch(2))
	if err := e.store.Release(ctx, a); err != nil {
		t.Fatal(err)
	}
	b := mustAcquire(t, e.store, "b", time.Minute)
	mustCommit(t, e.store, b, Batch{Terminal: []Tracked{{ID: "a", At: time.UnixMilli(5000)}}})

	before := dump(t, e.rdb, e.store)
	big := fullBatch(5)
	big.Deletes = []Ref{{Kind: "call", ID: "a"}, {Kind: "call", ID: "b"}}
	big.Terminal = []Tracked{{ID: "b", At: time.UnixMilli(9000)}}
	big.Snapshots = append(big.Snapshots, Snapshot{Kind: "team", ID: "t", Data: []byte("t")})
	for name, lease := range map[string]Lease{
		"old token":         a,
		"other holder":      {Holder: "a", Token: b.Token, TTL: time.Minute},
		"future token":      {Holder: "b", Token: b.Token + 1, TTL: time.Minute},
		"released, expired": {Holder: "c", Token: b.Token + 5, TTL: time.Minute},
	} {
		if _, err := e.store.Commit(ctx, lease, big); !errors.Is(err, ErrStaleLeader) {
			t.Errorf("%s: Commit = %v, want ErrStaleLeader", name, err)
		}
	}
	sameDump(t, "refused commits", before, dump(t, e.rdb, e.store))
}

// The fence refuses a token older than one that already wrote, even when the lease
// key says otherwise (here: rolled back to an older lease, as a restore of an old
// RDB might).
func TestCommitFence(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	a := mustAcquire(t, e.store, "a", time.Minute)
	mustCommit(t, e.store, a, fullBatch(1))
	expireLease(t, e.store, a)
	b := mustAcquire(t, e.store, "b", time.Minute)
	mustCommit(t, e.store, b, fullBatch(2))
	if _, err := e.store.Commit(ctx, a, fullBatch(3)); !errors.Is(err, ErrStaleLeader) {
		t.Fatalf("late commit of expired leader: %v, want ErrStaleLeader", err)
	}
	if fence, _ := e.rdb.Get(ctx, e.store.k.fence).Int64(); fence != b.Token {
		t.Fatalf("fence = %d, want %d", fence, b.Token)
	}

	// Roll the lease back to a's.
	if err := e.rdb.HSet(ctx, e.store.k.lease, "holder", "a", "token", a.Token).Err(); err != nil {
		t.Fatal(err)
	}
	before := dump(t, e.rdb, e.store)
	_, err := e.store.Commit(ctx, a, fullBatch(3))
	if !errors.Is(err, ErrStaleLeader) || !strings.Contains(err.Error(), "newer token") {
		t.Fatalf("commit below the fence: %v, want ErrStaleLeader for a newer token", err)
	}
	sameDump(t, "commit below the fence", before, dump(t, e.rdb, e.store))
}

func TestCommitBatchLimit(t *testing.T) {
	e := newEnv(t, WithMaxBatchItems(10))
	ctx := ctxT(t)
	l := mustAcquire(t, e.store, "a", time.Minute)
	before := dump(t, e.rdb, e.store)
	over := fullBatch(4) // 4 snapshots + 4 open + 4 events + 1 cursor = 13
	if _, err := e.store.Commit(ctx, l, over); !errors.Is(err, ErrBatchTooLarge) {
		t.Fatalf("13 items, limit 10: %v, want ErrBatchTooLarge", err)
	}
	sameDump(t, "too large", before, dump(t, e.rdb, e.store))
	if _, err := e.store.Commit(ctx, l, fullBatch(3)); err != nil { // 10 items
		t.Fatalf("10 items, limit 10: %v", err)
	}
}

// A batch over the byte limit is refused before it reaches Redis, which would
// otherwise close the connection on a command over its own limits
// (proto-max-bulk-len, client-query-buffer-limit): a refusal a caller could
// not tell from a network failure.
func TestCommitByteLimit(t *testing.T) {
	e := newEnv(t, WithMaxBatchBytes(1000))
	ctx := ctxT(t)
	l := mustAcquire(t, e.store, "a", time.Minute)
	before := dump(t, e.rdb, e.store)
	over := Batch{Snapshots: []Snapshot{{Kind: "call", ID: "1", Data: make([]byte, 1001)}}}
	if _, err := e.store.Commit(ctx, l, over); !errors.Is(err, ErrBatchTooLarge) {
		t.Fatalf("1001 bytes, limit 1000: %v, want ErrBatchTooLarge", err)
	}
	sameDump(t, "too many bytes", before, dump(t, e.rdb, e.store))
	if n := fullBatch(3).Bytes(); n < 3*len("snap-a") || n > 1000 {
		t.Fatalf("fullBatch(3).Bytes() = %d", n)
	}
	mustCommit(t, e.store, l, fullBatch(3))
	if _, err := New(e.rdb, "x", WithMaxBatchBytes(0)); !errors.Is(err, ErrInvalid) {
		t.Errorf("WithMaxBatchBytes(0): %v, want ErrInvalid", err)
	}
}

// The default hard limit is reachable: one script takes that many items.
func TestCommitDefaultLimit(t *testing.T) {
	e := newEnv(t)
	l := mustAcquire(t, e.store, "a", time.Minute)
	var b Batch
	for i := range DefaultMaxBatchItems {
		b.Events = append(b.Events, event.Message{ID: fmt.Sprint(i), Subject: "s", Data: []byte("{}")})
	}
	if res := mustCommit(t, e.store, l, b); len(res.StreamIDs) != DefaultMaxBatchItems {
		t.Fatalf("StreamIDs = %d, want %d", len(res.StreamIDs), DefaultMaxBatchItems)
	}
	b.Events = append(b.Events, event.Message{ID: "one more", Subject: "s"})
	if _, err := e.store.Commit(ctxT(t), l, b); !errors.Is(err, ErrBatchTooLarge) {
		t.Fatalf("limit + 1: %v, want ErrBatchTooLarge", err)
	}
}

func TestCommitEmptyAndInvalid(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	l := mustAcquire(t, e.store, "a", time.Minute)
	if res, err := e.store.Commit(ctx, Lease{Holder: "stale", Token: 1}, Batch{Cursors: map[string]string{}}); err != nil || len(res.StreamIDs) != 0 {
		t.Errorf("empty batch: %+v %v, want a no-op", res, err)
	}
	for name, b := range map[string]Batch{
		"bad kind":        {Snapshots: []Snapshot{{Kind: "call:x", ID: "1"}}},
		"empty kind":      {Deletes: []Ref{{ID: "1"}}},
		"empty id":        {Snapshots: []Snapshot{{Kind: "call"}}},
		"empty open id":   {Open: []Tracked{{}}},
		"empty cursor":    {Cursors: map[string]string{"": "x"}},
		"event no id":     {Events: []event.Message{{Subject: "s"}}},
		"event no subjct": {Events: []event.Message{{ID: "e"}}},
	} {
		if _, err := e.store.Commit(ctx, l, b); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
	if _, err := e.store.Commit(ctx, Lease{}, fullBatch(1)); !errors.Is(err, ErrInvalid) {
		t.Errorf("zero lease: %v, want ErrInvalid", err)
	}
}
