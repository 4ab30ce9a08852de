package cursor

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/event"
	"github.com/redis/go-redis/v9"
)

// TestOutboxCacheReadsAsRedis runs a relay's reads through a store with the
// outbox cache and through one without, on the same outbox, while its own commits
// (chained with OutboxSeen, as the poller's are), another writer's commits (no
// cache: another replica, or a first commit that learns no predecessor), trims and
// reads of every size interleave at random: both must return the same records,
// field for field, at every step, but that a read served from memory may stop
// where the run ends (never before its first record).
func TestOutboxCacheReadsAsRedis(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	for seed := range uint64(4) {
		account := fmt.Sprintf("%s-%d", e.store.account, seed)
		cached := mustStore(t, e.rdb, account, WithOutboxCache(16))
		cached.recent.roomWait = 0            // the reads come from this goroutine: no commit may wait for one
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
					e := event.Message{ID: fmt.Sprintf("s%d-e%d", seed, n), Subject: "callcenter.acme.call.created",
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
				res := mustCommit(t, other, l, Batch{Events: []event.Message{{ID: fmt.Sprintf("o%d-e%d", seed, n), Subject: "callcenter.acme.user.created", Data: []byte(`{}`)}}})
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
				_, fromMemory := cached.recent.start(after)
				if fromMemory {
					cachedReads++
				}
				got, err := cached.ReadOutbox(ctx, after, count)
				if err != nil {
					t.Fatal(err)
				}
				if len(got) > 0 && len(got) < len(want) {
					want = want[:len(got)] // the rest comes with the next read
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
// that chained on its predecessor come from memory, the first commit's do not (it
// learned no predecessor), nor does a position the cache has dropped.
func TestOutboxCacheServesFromMemory(t *testing.T) {
	e, _, second := chainedCommits(t, 4, 6)
	ctx := ctxT(t)
	if _, ok := e.store.recent.start(""); ok {
		t.Error("a read from the head is served from memory")
	}
	if _, ok := e.store.recent.start(second.StreamIDs[0]); ok {
		t.Error("a read after an entry dropped (the cache holds 4) is served from memory")
	}
	// The cache keeps the last 4 of the second commit's 6.
	if i, ok := e.store.recent.start(second.StreamIDs[1]); !ok || i != 0 {
		t.Fatalf("read after the 2nd entry: from memory %v at %d, want at 0", ok, i)
	}
	got, err := e.store.ReadOutbox(ctx, second.StreamIDs[1], 10)
	if err != nil || len(got) != 4 || got[0].StreamID != second.StreamIDs[2] || got[0].ID != "ev-c" || string(got[3].Data) != `{"id":"f"}` {
		t.Fatalf("read after the 2nd entry = %+v, %v: want the last 4", got, err)
	}
	if !got[0].CommittedAt.Equal(streamTime(t, second.StreamIDs[2])) {
		t.Errorf("CommittedAt = %v, want the stream id's time", got[0].CommittedAt)
	}
	// A read further on drops what comes before it.
	if _, err := e.store.ReadOutbox(ctx, second.StreamIDs[3], 10); err != nil {
		t.Fatal(err)
	}
	if _, ok := e.store.recent.start(second.StreamIDs[1]); ok {
		t.Error("a read before the last one is still served from memory")
	}
}

// TestOutboxCacheLosesWhatRedisLost: Redis going back in time (a failover or a
// restore without the last commit's entries) is noticed by the next read from
// memory, before any commit: it serves none of the lost entries and forgets
// them. A commit refused for it, or any failed commit, and a new lease term
// forget the run too.
func TestOutboxCacheLosesWhatRedisLost(t *testing.T) {
	e, l, second := chainedCommits(t, 100, 4)
	ctx := ctxT(t)
	// Redis comes back holding the outbox up to the second commit's 2nd entry.
	lost := func() {
		t.Helper()
		recs, err := e.store.ReadOutbox(ctx, "", 100) // from the head: Redis
		if err != nil || len(recs) != 6 {
			t.Fatalf("read = %d records, %v", len(recs), err)
		}
		if err := e.rdb.Del(ctx, e.store.k.outbox).Err(); err != nil {
			t.Fatal(err)
		}
		for _, r := range recs[:4] {
			if err := e.rdb.XAdd(ctx, &redis.XAddArgs{Stream: e.store.k.outbox, ID: r.StreamID, Values: []string{"id", r.ID, "subject", r.Subject, "data", string(r.Data)}}).Err(); err != nil {
				t.Fatal(err)
			}
		}
		// outbox:meta goes back with the outbox (one script writes both).
		if err := e.rdb.HSet(ctx, e.store.k.outboxMeta, "last", recs[3].StreamID).Err(); err != nil {
			t.Fatal(err)
		}
	}
	lost()
	if _, ok := e.store.recent.start(second.StreamIDs[1]); !ok {
		t.Fatal("the run does not hold the lost entries: nothing tested")
	}
	got, err := e.store.ReadOutbox(ctx, second.StreamIDs[1], 10)
	if err != nil || len(got) != 0 {
		t.Fatalf("read after what Redis kept = %+v, %v: want none (Redis lost the rest)", got, err)
	}
	if _, ok := e.store.recent.start(second.StreamIDs[1]); ok {
		t.Error("the run is still there after Redis was found without it")
	}

	// A commit refused because Redis went back in time forgets the run.
	b := fullBatch(2)
	b.OutboxSeen = second.StreamIDs[1] // what Redis kept: accepted, and a run again
	third := mustCommit(t, e.store, l, b)
	if _, ok := e.store.recent.start(second.StreamIDs[1]); !ok {
		t.Fatal("no run after a chained commit")
	}
	b.OutboxSeen = "9999999999999-0" // newer than anything Redis has
	if _, err := e.store.Commit(ctx, l, b); !errors.Is(err, ErrRolledBack) {
		t.Fatalf("commit = %v, want ErrRolledBack", err)
	}
	if _, ok := e.store.recent.start(second.StreamIDs[1]); ok {
		t.Error("the run is still there after a refused commit")
	}

	// A new term forgets it.
	b.OutboxSeen = third.StreamIDs[1]
	mustCommit(t, e.store, l, b)
	if _, ok := e.store.recent.start(third.StreamIDs[1]); !ok {
		t.Fatal("no run after a chained commit")
	}
	mustAcquire(t, e.store, "a", time.Minute)
	if _, ok := e.store.recent.start(third.StreamIDs[1]); ok {
		t.Error("the run is still there after the lease was acquired again")
	}
}

// chainedCommits commits 2 events, then n more chained on them (OutboxSeen), into a
// store with a cache of size entries, and returns the store's env, its lease and
// the second commit's result: its entries are the cache's run.
func chainedCommits(t *testing.T, size, n int) (env, Lease, CommitResult) {
	t.Helper()
	e := newEnv(t, WithOutboxCache(size))
	l := mustAcquire(t, e.store, "a", time.Minute)
	first := mustCommit(t, e.store, l, fullBatch(2))
	b := fullBatch(n)
	b.OutboxSeen = first.StreamIDs[1]
	return e, l, mustCommit(t, e.store, l, b)
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
func sameRecords(got, want []event.Committed) error {
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
	ev := func(id string) event.Message { return event.Message{ID: id, Subject: "callcenter.acme.call.created"} }
	c.begin(t.Context())("1-0", []event.Message{ev("a")}, []string{"1-1"})
	if got, ok := c.read(t.Context(), "1-0", 5); !ok || len(got) != 1 || got[0].ID != "a" {
		t.Fatalf("read after 1-0 = %+v %v, want a", got, ok)
	}
	done := c.begin(t.Context())
	canceled, cancel := context.WithCancel(t.Context())
	cancel()
	if _, ok := c.read(canceled, "1-1", 5); ok {
		t.Error("read with a done context while a commit is under way: ok")
	}
	got := make(chan []event.Committed)
	go func() {
		recs, _ := c.read(t.Context(), "1-1", 5)
		got <- recs
	}()
	done("1-1", []event.Message{ev("b"), ev("c")}, []string{"1-2", "1-3"})
	if recs := <-got; len(recs) != 2 || recs[0].ID != "b" || recs[1].StreamID != "1-3" {
		t.Errorf("read during the commit = %+v, want b and c", recs)
	}
	// A failed commit ends the wait with nothing: Redis is asked.
	fail := c.begin(t.Context())
	go func() {
		recs, _ := c.read(t.Context(), "1-3", 5)
		got <- recs
	}()
	fail("", nil, nil)
	if recs := <-got; len(recs) != 0 {
		t.Errorf("read during a failed commit = %+v, want none", recs)
	}
}

// TestOutboxCacheCommitWaitsForTheRelay: a commit that finds the run full of
// entries a reading relay has not read waits until the relay reads; with no read
// for a while (no relay, or a stopped one) it does not wait.
func TestOutboxCacheCommitWaitsForTheRelay(t *testing.T) {
	c := &recent{max: 2, roomWait: time.Minute}
	ev := func(id string) event.Message { return event.Message{ID: id, Subject: "callcenter.acme.call.created"} }
	c.begin(t.Context())("1-0", []event.Message{ev("a"), ev("b")}, []string{"1-1", "1-2"})
	// No relay has read: the next commit goes on at once, and the run drops its oldest.
	c.begin(t.Context())("1-2", []event.Message{ev("c")}, []string{"1-3"})
	if got, ok := c.read(t.Context(), "1-1", 5); !ok || len(got) != 2 || got[0].ID != "b" {
		t.Fatalf("read after 1-1 = %+v %v, want b, c", got, ok)
	}
	// A relay reads (just now) and the run is full: the next commit waits for a read.
	began := make(chan struct{})
	go func() {
		done := c.begin(t.Context())
		close(began)
		done("1-3", []event.Message{ev("d")}, []string{"1-4"})
	}()
	select {
	case <-began:
		t.Fatal("a commit went on with the run full and a relay reading")
	case <-time.After(50 * time.Millisecond): // it waits (not a timing assertion: any wait would do)
	}
	if got, ok := c.read(t.Context(), "1-2", 5); !ok || len(got) != 1 || got[0].ID != "c" {
		t.Fatalf("read after 1-2 = %+v %v, want c", got, ok)
	}
	<-began
	// The run is full again (c, d): a commit whose context ends goes on.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	c.begin(ctx)("1-4", []event.Message{ev("e")}, []string{"1-5"})
}
