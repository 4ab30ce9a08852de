package cursor

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/event"
)

func commitEvents(t *testing.T, s *Store, l Lease, from, n int) []string {
	t.Helper()
	var b Batch
	for i := from; i < from+n; i++ {
		b.Events = append(b.Events, event.Message{ID: fmt.Sprintf("e%d", i), Subject: "s", Data: []byte("{}")})
	}
	return mustCommit(t, s, l, b).StreamIDs
}

func TestOutboxReadTrim(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	l := mustAcquire(t, e.store, "a", time.Minute)

	if _, ok, err := e.store.OutboxOldest(ctx); ok || err != nil {
		t.Fatalf("OutboxOldest on empty = %v %v, want none", ok, err)
	}
	if recs, err := e.store.ReadOutbox(ctx, "", 10); err != nil || len(recs) != 0 {
		t.Fatalf("ReadOutbox on empty = %v %v", recs, err)
	}
	start := time.Now()
	ids := append(commitEvents(t, e.store, l, 0, 3), commitEvents(t, e.store, l, 3, 2)...)

	first, err := e.store.ReadOutbox(ctx, "", 2)
	if err != nil || len(first) != 2 || first[0].ID != "e0" || first[1].ID != "e1" {
		t.Fatalf("ReadOutbox(\"\", 2) = %+v %v", first, err)
	}
	rest, err := e.store.ReadOutbox(ctx, first[1].StreamID, 10)
	if err != nil || len(rest) != 3 || rest[0].ID != "e2" || rest[2].ID != "e4" {
		t.Fatalf("ReadOutbox(after e1) = %+v %v, want e2..e4", rest, err)
	}
	if n, err := e.store.OutboxLen(ctx); err != nil || n != 5 {
		t.Fatalf("OutboxLen = %d %v, want 5", n, err)
	}
	oldest, ok, err := e.store.OutboxOldest(ctx)
	// The stream id's time is the Redis server's clock: the same machine here.
	if err != nil || !ok || oldest.Before(start.Add(-time.Second)) || oldest.After(time.Now().Add(time.Second)) {
		t.Fatalf("OutboxOldest = %v %v %v, want about %v", oldest, ok, err, start)
	}

	if err := e.store.TrimOutbox(ctx, ids[2]); err != nil {
		t.Fatalf("TrimOutbox: %v", err)
	}
	left, _ := e.store.ReadOutbox(ctx, "", 10)
	if len(left) != 2 || left[0].ID != "e3" || left[1].ID != "e4" {
		t.Fatalf("after trimming up to e2: %+v, want e3 e4", left)
	}
	// Trimming again, or up to an id older than everything left, changes nothing;
	// reading after a trimmed id still works.
	for _, id := range []string{ids[2], ids[0], "0-0", "1-0"} {
		if err := e.store.TrimOutbox(ctx, id); err != nil {
			t.Fatalf("TrimOutbox(%s): %v", id, err)
		}
	}
	if n, _ := e.store.OutboxLen(ctx); n != 2 {
		t.Fatalf("OutboxLen after no-op trims = %d, want 2", n)
	}
	if recs, _ := e.store.ReadOutbox(ctx, ids[1], 10); len(recs) != 2 || recs[0].ID != "e3" {
		t.Fatalf("ReadOutbox after a trimmed id = %+v", recs)
	}
	oldest2, _, _ := e.store.OutboxOldest(ctx)
	if oldest2.Before(oldest) {
		t.Fatalf("oldest went back after trim: %v < %v", oldest2, oldest)
	}

	if err := e.store.TrimOutbox(ctx, ids[4]); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := e.store.OutboxOldest(ctx); ok {
		t.Fatal("OutboxOldest after trimming all: want none")
	}
	// New entries after a full trim still come after the old ones.
	more := commitEvents(t, e.store, l, 5, 1)
	if recs, _ := e.store.ReadOutbox(ctx, ids[4], 10); len(recs) != 1 || recs[0].StreamID != more[0] {
		t.Fatalf("ReadOutbox after full trim = %+v, want %s", recs, more[0])
	}
}

func TestOutboxTrimSameMillisecond(t *testing.T) {
	e := newEnv(t)
	l := mustAcquire(t, e.store, "a", time.Minute)
	ids := commitEvents(t, e.store, l, 0, 50) // one script: ids often share a millisecond
	if err := e.store.TrimOutbox(ctxT(t), ids[24]); err != nil {
		t.Fatal(err)
	}
	recs, _ := e.store.ReadOutbox(ctxT(t), "", 100)
	if len(recs) != 25 || recs[0].StreamID != ids[25] {
		t.Fatalf("after trimming up to the 25th: %d left starting %v, want 25 from %s", len(recs), recs[0].StreamID, ids[25])
	}
}

func TestOutboxInvalid(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	for _, id := range []string{"", "abc", "12", "1-x", "-1-0"} {
		if err := e.store.TrimOutbox(ctx, id); !errors.Is(err, ErrInvalid) {
			t.Errorf("TrimOutbox(%q) = %v, want ErrInvalid", id, err)
		}
	}
	if _, err := e.store.ReadOutbox(ctx, "12", 10); !errors.Is(err, ErrInvalid) {
		t.Errorf("ReadOutbox(bad id) = %v, want ErrInvalid", err)
	}
	if _, err := e.store.ReadOutbox(ctx, "", 0); !errors.Is(err, ErrInvalid) {
		t.Errorf("ReadOutbox(count 0) = %v, want ErrInvalid", err)
	}
	if _, err := e.store.WaitOutbox(ctx, "", 10, 0); !errors.Is(err, ErrInvalid) {
		t.Errorf("WaitOutbox(block 0) = %v, want ErrInvalid", err)
	}
}

func TestWaitOutbox(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	l := mustAcquire(t, e.store, "a", time.Minute)

	recs, err := e.store.WaitOutbox(ctx, "", 10, 20*time.Millisecond)
	if err != nil || len(recs) != 0 {
		t.Fatalf("WaitOutbox on empty = %v %v, want nothing after the block", recs, err)
	}

	type result struct {
		recs []event.Committed
		err  error
	}
	done := make(chan result, 1)
	go func() {
		r, err := e.store.WaitOutbox(ctx, "", 10, 5*time.Second)
		done <- result{r, err}
	}()
	ids := commitEvents(t, e.store, l, 0, 2)
	r := <-done
	if r.err != nil || len(r.recs) == 0 || r.recs[0].StreamID != ids[0] {
		t.Fatalf("WaitOutbox woken by a commit = %+v %v, want from %s", r.recs, r.err, ids[0])
	}
	after, err := e.store.WaitOutbox(ctx, ids[0], 10, 5*time.Second)
	if err != nil || len(after) != 1 || after[0].StreamID != ids[1] {
		t.Fatalf("WaitOutbox(after first) = %+v %v, want %s", after, err, ids[1])
	}
}
