package cursor

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// ackedIDs is every acknowledged entry the store keeps, by event id, in order.
func ackedIDs(t *testing.T, s *Store) []string {
	t.Helper()
	recs, err := s.ReadAcked(ctxT(t), "", 100_000)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.ID
	}
	return out
}

func eventIDs(from, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("e%d", from+i)
	}
	return out
}

// Trimming acknowledges: the entries leave the outbox and are kept, whole and
// under their outbox ids, for the relay to publish again if the stream loses them;
// a trim of more than one script's share moves them all.
func TestTrimOutboxKeepsAcknowledgedEntries(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	l := mustAcquire(t, e.store, "a", time.Minute)
	var ids []string
	for i := 0; i < 2*trimBatch+10; i += 500 {
		ids = append(ids, commitEvents(t, e.store, l, i, 500)...)
	}
	if err := e.store.TrimOutbox(ctx, ids[2]); err != nil {
		t.Fatal(err)
	}
	kept, err := e.store.ReadAcked(ctx, "", 10)
	if err != nil || len(kept) != 3 || kept[0].StreamID != ids[0] || kept[2].ID != "e2" || kept[2].Subject != "s" || string(kept[2].Data) != "{}" {
		t.Fatalf("ReadAcked = %+v %v, want e0..e2 as committed", kept, err)
	}
	if after, err := e.store.ReadAcked(ctx, ids[0], 10); err != nil || len(after) != 2 || after[0].ID != "e1" {
		t.Fatalf("ReadAcked after e0 = %+v %v, want e1 e2", after, err)
	}
	if err := e.store.TrimOutbox(ctx, ids[len(ids)-1]); err != nil {
		t.Fatal(err)
	}
	if got := ackedIDs(t, e.store); !slices.Equal(got, eventIDs(0, len(ids))) {
		t.Fatalf("kept %d entries, want all %d in order", len(got), len(ids))
	}
	if n, err := e.store.OutboxLen(ctx); err != nil || n != 0 {
		t.Fatalf("OutboxLen = %d %v, want 0: kept entries are not waiting", n, err)
	}
}

// The retention counts from the acknowledgement, and the bound on entries holds
// whatever the rate; without a retention nothing is kept.
func TestTrimOutboxRetentionAndBound(t *testing.T) {
	t.Run("time", func(t *testing.T) {
		const keep = 300 * time.Millisecond
		e := newEnv(t, WithAckRetention(keep, 1000))
		l := mustAcquire(t, e.store, "a", time.Minute)
		ids := commitEvents(t, e.store, l, 0, 3)
		if err := e.store.TrimOutbox(ctxT(t), ids[2]); err != nil {
			t.Fatal(err)
		}
		acked := time.Now()
		n := 3
		for ; ; n++ { // each later trim lets the retention go by for the first three
			id := commitEvents(t, e.store, l, n, 1)
			if err := e.store.TrimOutbox(ctxT(t), id[0]); err != nil {
				t.Fatal(err)
			}
			if got := ackedIDs(t, e.store); got[0] != "e0" {
				if time.Since(acked) < keep {
					t.Fatalf("e0..e2 dropped %s after their acknowledgement, want %s kept", time.Since(acked), keep)
				}
				if got[len(got)-1] != fmt.Sprintf("e%d", n) {
					t.Fatalf("kept %v, want the entry just acknowledged last", got)
				}
				return
			}
			if time.Since(acked) > 20*time.Second {
				t.Fatal("entries kept past their retention")
			}
			time.Sleep(20 * time.Millisecond) // a relay's trims come apart in time
		}
	})
	t.Run("bound", func(t *testing.T) {
		// Six commits of five events each (whole batch entries are dropped), the
		// bound in bytes set from the entries' sizes as Redis holds them: their
		// fields' names and values.
		commitAll := func(t *testing.T, maxBytes int) env {
			e := newEnv(t, WithAckRetention(time.Hour, maxBytes))
			l := mustAcquire(t, e.store, "a", time.Minute)
			var ids []string
			for i := 0; i < 30; i += 5 {
				ids = append(ids, commitEvents(t, e.store, l, i, 5)...)
			}
			if err := e.store.TrimOutbox(ctxT(t), ids[29]); err != nil {
				t.Fatal(err)
			}
			return e
		}
		all := commitAll(t, 1<<30)
		if got := ackedIDs(t, all.store); !slices.Equal(got, eventIDs(0, 30)) {
			t.Fatalf("kept %v under a bound above them all, want all 30", got)
		}
		entries, err := all.rdb.XRange(ctxT(t), all.store.k.acked, "-", "+").Result()
		if err != nil || len(entries) != 6 {
			t.Fatalf("acked holds %d entries (%v), want 6", len(entries), err)
		}
		size := func(m redis.XMessage) (n int) {
			for k, v := range m.Values {
				n += len(k) + len(v.(string))
			}
			return n
		}
		lastTwo := size(entries[4]) + size(entries[5])
		if got := ackedIDs(t, commitAll(t, lastTwo).store); !slices.Equal(got, eventIDs(20, 10)) {
			t.Fatalf("kept %v under a bound of the last two entries' %d bytes, want the newest 10", got, lastTwo)
		}
		if got := ackedIDs(t, commitAll(t, lastTwo-1).store); !slices.Equal(got, eventIDs(25, 5)) {
			t.Fatalf("kept %v under a bound a byte short of the last two entries, want the newest 5", got)
		}
	})
	t.Run("none", func(t *testing.T) {
		e := newEnv(t, WithAckRetention(0, 0))
		l := mustAcquire(t, e.store, "a", time.Minute)
		ids := commitEvents(t, e.store, l, 0, 3)
		if err := e.store.TrimOutbox(ctxT(t), ids[2]); err != nil {
			t.Fatal(err)
		}
		if got := ackedIDs(t, e.store); len(got) != 0 {
			t.Fatalf("kept %v without a retention", got)
		}
	})
}

// Withdrawals are counted per entry, outlive the process (they are in Redis) and
// are forgotten once the entry is acknowledged.
func TestOutboxWithdrawals(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	l := mustAcquire(t, e.store, "a", time.Minute)
	ids := commitEvents(t, e.store, l, 0, 4)
	if got, err := e.store.WithdrawOutbox(ctx, []string{ids[1], ids[3]}); err != nil || got[ids[1]] != 1 || got[ids[3]] != 1 {
		t.Fatalf("WithdrawOutbox = %v %v, want 1 each", got, err)
	}
	if got, err := e.store.WithdrawOutbox(ctx, []string{ids[3]}); err != nil || got[ids[3]] != 2 {
		t.Fatalf("WithdrawOutbox again = %v %v, want 2", got, err)
	}
	again := mustStore(t, e.rdb, e.store.Account()) // another process
	if got, err := again.OutboxWithdrawals(ctx); err != nil || !maps.Equal(got, map[string]int{ids[1]: 1, ids[3]: 2}) {
		t.Fatalf("OutboxWithdrawals = %v %v", got, err)
	}
	if err := again.TrimOutbox(ctx, ids[2]); err != nil {
		t.Fatal(err)
	}
	if got, err := again.OutboxWithdrawals(ctx); err != nil || !maps.Equal(got, map[string]int{ids[3]: 2}) {
		t.Fatalf("after trimming up to entry 2: %v %v, want only entry 3's", got, err)
	}
}
