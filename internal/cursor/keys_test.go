package cursor

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// exercise writes through every part of the store.
func exercise(t *testing.T, s *Store) {
	t.Helper()
	l := mustAcquire(t, s, "a", time.Minute)
	b := fullBatch(3)
	b.Snapshots = append(b.Snapshots, Snapshot{Kind: "metric", ID: "a", Data: []byte("m")})
	b.Terminal = []Tracked{{ID: "c", At: time.UnixMilli(1)}}
	mustCommit(t, s, l, b)
	if _, err := s.Prune(ctxT(t), l, time.UnixMilli(0), 10); err != nil {
		t.Fatal(err)
	}
}

func TestKeysCarryHashTag(t *testing.T) {
	e := newEnv(t)
	exercise(t, e.store)
	keys := accountKeys(t, e.rdb, e.store)
	prefix := "callbus:{" + e.store.Account() + "}:"
	if e.store.KeyPrefix() != prefix {
		t.Errorf("KeyPrefix = %q, want %q", e.store.KeyPrefix(), prefix)
	}
	// lease, seq, fence, kinds, open, terminal, cursor, outbox, outbox:meta,
	// snap:call, snap:metric
	if len(keys) != 11 {
		t.Errorf("keys = %v, want 11", keys)
	}
	for _, k := range keys {
		if !strings.HasPrefix(k, prefix) {
			t.Errorf("key %q lacks the prefix %q", k, prefix)
		}
	}
	total, per, err := e.store.MemoryUsage(ctxT(t))
	if err != nil || total <= 0 || len(per) != 11 || per["snap:call"] <= 0 {
		t.Errorf("MemoryUsage = %d %v %v", total, per, err)
	}
}

func TestAccountsAreIsolated(t *testing.T) {
	e := newEnv(t)
	other := mustStore(t, e.rdb, uniqueAccount(t)+"-other")
	exercise(t, e.store)
	ctx := ctxT(t)

	if h, _, _, _ := other.Leader(ctx); h != "" {
		t.Errorf("other account sees leader %q", h)
	}
	mustAcquire(t, other, "z", time.Minute) // its own lease, while a holds the first
	if n, _ := other.OutboxLen(ctx); n != 0 {
		t.Errorf("other account outbox = %d", n)
	}
	if c, _ := other.Cursors(ctx); len(c) != 0 {
		t.Errorf("other account cursors = %v", c)
	}
	if s, _ := other.GetSnapshots(ctx, "call", []string{"a", "b"}); len(s) != 0 {
		t.Errorf("other account snapshots = %v", s)
	}
	if o, _ := other.OpenCalls(ctx, 0); len(o) != 0 {
		t.Errorf("other account open calls = %v", o)
	}
	for _, k := range accountKeys(t, e.rdb, other) {
		if !strings.HasPrefix(k, other.KeyPrefix()) {
			t.Errorf("key %q of the other account lacks its prefix", k)
		}
	}
}

func TestNewValidates(t *testing.T) {
	e := newEnv(t)
	for _, acct := range []string{"", "a{b", "a}b", "a b", "a\n"} {
		if _, err := New(e.rdb, acct); !errors.Is(err, ErrInvalid) {
			t.Errorf("New(%q) = %v, want ErrInvalid", acct, err)
		}
	}
	if _, err := New(nil, "acme"); !errors.Is(err, ErrInvalid) {
		t.Errorf("New(nil client) = %v, want ErrInvalid", err)
	}
	if _, err := New(e.rdb, "acme", WithPruneKinds("a:b")); !errors.Is(err, ErrInvalid) {
		t.Errorf("bad prune kind: %v, want ErrInvalid", err)
	}
	if _, err := New(e.rdb, "acme", WithMaxBatchItems(0)); !errors.Is(err, ErrInvalid) {
		t.Errorf("max batch items 0: %v, want ErrInvalid", err)
	}
	if _, err := e.store.GetSnapshots(ctxT(t), "bad kind", nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("GetSnapshots(bad kind) = %v, want ErrInvalid", err)
	}
}
