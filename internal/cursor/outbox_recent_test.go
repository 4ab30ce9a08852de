package cursor

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"
	"time"
)

// TestOutboxCacheReadsAsRedis runs a relay's reads through a store with the
// outbox cache and through one without, on the same outbox, while its own commits
// (chained with OutboxSeen, as the poller's are), another writer's commits (no
// cache: another replica, or a first commit that learns no predecessor), trims and
// reads of every size interleave at random: both must return the same records,
// field for field, at every step (the cached store may return a prefix: what it
// holds).
func TestOutboxCacheReadsAsRedis(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	for seed := range uint64(4) {
		account := fmt.Sprintf("%s-%d", e.store.account, seed)
		cached := mustStore(t, e.rdb, account, WithOutboxCache(16))
		other := mustStore(t, e.rdb, account) // the same account, no cache
		l := mustAcquire(t, cached, "a", time.Minute)
		rng := rand.New(rand.NewPCG(seed, 7))
		var seen string // the newest outbox id cached's commits wrote
		after, n := "", 0
		cachedReads := 0
		for step := range 400 {
			switch op := rng.IntN(20); { // reads keep up, as a relay does
			case op < 6: // a commit of this store
				b := Batch{OutboxSeen: seen}
				for range 1 + rng.IntN(9) {
					n++
					e := OutboxEntry{ID: fmt.Sprintf("s%d-e%d", seed, n), Subject: "callcenter.acme.call.created",
						Type: "call.created", Time: time.Unix(1_700_000_000+int64(n), 123456789).UTC(), Data: fmt.Appendf(nil, `{"n":%d}`, n)}
					if n%3 == 0 {
						e.Headers = map[string]string{"traceparent": fmt.Sprintf("00-%032x-%016x-01", n, n)}
					}
					b.Events = append(b.Events, e)
				}
				res := mustCommit(t, cached, l, b)
				seen = res.StreamIDs[len(res.StreamIDs)-1]
			case op < 7: // another writer's commit
				n++
				res := mustCommit(t, other, l, Batch{Events: []OutboxEntry{{ID: fmt.Sprintf("o%d-e%d", seed, n), Subject: "callcenter.acme.user.created", Data: []byte(`{}`)}}})
				seen = res.StreamIDs[0] // as a leader that took over would see it
			case op < 9: // a trim of what was read
				if after != "" {
					if err := cached.TrimOutbox(ctx, after); err != nil {
						t.Fatal(err)
					}
				}
			case op < 10: // a relay starting over from the head
				after = ""
			default: // a read
				count := 1 + rng.IntN(12)
				want, err := other.ReadOutbox(ctx, after, count)
				if err != nil {
					t.Fatal(err)
				}
				if _, ok := cached.recent.start(after); ok {
					cachedReads++
				}
				got, err := cached.ReadOutbox(ctx, after, count)
				if err != nil {
					t.Fatal(err)
				}
				// The cache may answer with fewer (what it holds), never with none
				// while Redis has some.
				if len(got) > 0 && len(got) < len(want) {
					want = want[:len(got)]
				}
				if err := sameRecords(got, want); err != nil {
					t.Fatalf("seed %d step %d: read after %q (%d): %v", seed, step, after, count, err)
				}
				if len(got) > 0 {
					after = got[len(got)-1].StreamID
				}
			}
		}
		if cachedReads == 0 {
			t.Errorf("seed %d: no read was served from the cache", seed)
		}
	}
}

// TestOutboxCacheServesFromMemory: entries the store committed after a commit
// that chained on its predecessor come from memory (here, after Redis lost the
// outbox key, they still do), the first commit's do not (it learned no
// predecessor), nor does a position the cache has dropped.
func TestOutboxCacheServesFromMemory(t *testing.T) {
	e := newEnv(t, WithOutboxCache(4))
	ctx := ctxT(t)
	l := mustAcquire(t, e.store, "a", time.Minute)
	first := mustCommit(t, e.store, l, fullBatch(2))
	b := fullBatch(6)
	b.OutboxSeen = first.StreamIDs[1]
	second := mustCommit(t, e.store, l, b)
	if err := e.rdb.Del(ctx, e.store.k.outbox).Err(); err != nil {
		t.Fatal(err)
	}
	got, err := e.store.ReadOutbox(ctx, "", 10)
	if err != nil || len(got) != 0 {
		t.Errorf("read from the head = %d records, %v: want Redis's (none)", len(got), err)
	}
	// The cache keeps the last 4 of the second commit's 6.
	got, err = e.store.ReadOutbox(ctx, second.StreamIDs[1], 10)
	if err != nil || len(got) != 4 || got[0].StreamID != second.StreamIDs[2] || got[0].ID != "ev-c" || string(got[3].Data) != `{"id":"f"}` {
		t.Fatalf("read after the 2nd entry = %+v, %v: want the last 4 from memory", got, err)
	}
	if !got[0].CommittedAt.Equal(streamTime(t, second.StreamIDs[2])) {
		t.Errorf("CommittedAt = %v, want the stream id's time", got[0].CommittedAt)
	}
	// A read further on drops what comes before it: a read from there again
	// goes to Redis (empty).
	if got, err := e.store.ReadOutbox(ctx, second.StreamIDs[3], 10); err != nil || len(got) != 2 || got[0].ID != "ev-e" {
		t.Errorf("read after the 4th entry = %+v, %v: want the last 2 from memory", got, err)
	}
	if got, err := e.store.ReadOutbox(ctx, second.StreamIDs[1], 10); err != nil || len(got) != 0 {
		t.Errorf("read again after the 2nd entry = %d records, %v: want none (Redis)", len(got), err)
	}
	if got, err := e.store.ReadOutbox(ctx, second.StreamIDs[0], 10); err != nil || len(got) != 0 {
		t.Errorf("read after the 1st entry = %d records, %v: want none (never cached)", len(got), err)
	}
}

func TestWithOutboxCacheRefusesNoRoom(t *testing.T) {
	e := newEnv(t)
	if _, err := New(e.rdb, "acme", WithOutboxCache(0)); err == nil {
		t.Error("WithOutboxCache(0): no error")
	}
}

func streamTime(t *testing.T, id string) time.Time {
	t.Helper()
	s, err := parseStreamID(id)
	if err != nil {
		t.Fatal(err)
	}
	return s.time()
}

// sameRecords compares records field by field; no headers and empty headers are
// the same to a reader.
func sameRecords(got, want []OutboxRecord) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d records, want %d", len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.StreamID != w.StreamID || !g.CommittedAt.Equal(w.CommittedAt) || g.ID != w.ID || g.Subject != w.Subject ||
			g.Type != w.Type || !g.Time.Equal(w.Time) || string(g.Data) != string(w.Data) ||
			len(g.Headers) != len(w.Headers) || (len(g.Headers) > 0 && !maps.Equal(g.Headers, w.Headers)) {
			return fmt.Errorf("record %d = %+v, want %+v", i, g, w)
		}
	}
	return nil
}

// TestOutboxCacheWaitsForACommitUnderWay: a relay that has read everything known
// and reads again while a commit is under way gets that commit's entries from
// memory once it ends, not an empty read (nor a read from Redis racing the
// commit); with its context done it gives up at once.
func TestOutboxCacheWaitsForACommitUnderWay(t *testing.T) {
	c := &recent{max: 10}
	ev := func(id string) OutboxEntry { return OutboxEntry{ID: id, Subject: "callcenter.acme.call.created"} }
	c.begin()("1-0", []OutboxEntry{ev("a")}, []string{"1-1"})
	if got, ok := c.read(t.Context(), "1-0", 5); !ok || len(got) != 1 || got[0].ID != "a" {
		t.Fatalf("read after 1-0 = %+v %v, want a", got, ok)
	}
	done := c.begin()
	canceled, cancel := context.WithCancel(t.Context())
	cancel()
	if _, ok := c.read(canceled, "1-1", 5); ok {
		t.Error("read with a done context while a commit is under way: ok")
	}
	got := make(chan []OutboxRecord)
	go func() {
		recs, _ := c.read(t.Context(), "1-1", 5)
		got <- recs
	}()
	done("1-1", []OutboxEntry{ev("b"), ev("c")}, []string{"1-2", "1-3"})
	if recs := <-got; len(recs) != 2 || recs[0].ID != "b" || recs[1].StreamID != "1-3" {
		t.Errorf("read during the commit = %+v, want b and c", recs)
	}
	// A failed commit ends the wait with nothing: Redis is asked.
	fail := c.begin()
	go func() {
		recs, _ := c.read(t.Context(), "1-3", 5)
		got <- recs
	}()
	fail("", nil, nil)
	if recs := <-got; len(recs) != 0 {
		t.Errorf("read during a failed commit = %+v, want none", recs)
	}
}
