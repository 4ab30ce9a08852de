package cursor

import (
	"errors"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/testkit/simtest"
)

func TestLeaseAcquireRenewRelease(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	a := mustAcquire(t, e.store, "a", time.Minute)
	if a.Token <= 0 || a.Holder != "a" || a.TTL != time.Minute {
		t.Fatalf("Acquire = %+v", a)
	}

	_, err := e.store.Acquire(ctx, "b", time.Minute)
	if !errors.Is(err, ErrNotLeader) {
		t.Fatalf("second holder: got %v, want ErrNotLeader", err)
	}
	var nl *NotLeaderError
	if !errors.As(err, &nl) || nl.Holder != "a" || nl.Token != a.Token || nl.TTL <= 0 || nl.TTL > time.Minute {
		t.Fatalf("second holder: got %#v, want holder a, token %d, 0 < ttl <= 1m", nl, a.Token)
	}

	if err := e.store.Renew(ctx, a); err != nil {
		t.Fatalf("Renew: %v", err)
	}
	again, err := e.store.Acquire(ctx, "a", 2*time.Minute)
	if err != nil || again.Token != a.Token {
		t.Fatalf("same-holder re-acquire: got %+v, %v; want token %d kept", again, err, a.Token)
	}
	holder, token, ttl, err := e.store.Leader(ctx)
	if err != nil || holder != "a" || token != a.Token || ttl <= time.Minute {
		t.Fatalf("Leader = %q %d %s %v; want a %d, ttl > 1m after re-acquire with 2m", holder, token, ttl, err, a.Token)
	}

	if err := e.store.Release(ctx, a); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if holder, _, _, err := e.store.Leader(ctx); err != nil || holder != "" {
		t.Fatalf("Leader after release = %q, %v; want none", holder, err)
	}
	if err := e.store.Release(ctx, a); err != nil {
		t.Fatalf("second Release: %v, want nil (idempotent)", err)
	}
	b := mustAcquire(t, e.store, "b", time.Minute)
	if b.Token <= a.Token {
		t.Fatalf("token after release = %d, want > %d", b.Token, a.Token)
	}
	if err := e.store.Release(ctx, a); err != nil {
		t.Fatalf("Release of a lost lease: %v, want nil", err)
	}
	if holder, _, _, _ := e.store.Leader(ctx); holder != "b" {
		t.Fatalf("a's Release removed b's lease: leader %q", holder)
	}
}

func TestLeaseExpiryTakeover(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	a := mustAcquire(t, e.store, "a", time.Minute)
	mustCommit(t, e.store, a, fullBatch(1))
	expireLease(t, e.store, a)
	var nl *NotLeaderError
	if err := e.store.Renew(ctx, a); !errors.As(err, &nl) || nl.Holder != "" {
		t.Fatalf("Renew after expiry: got %v, want NotLeaderError with no holder", err)
	}

	b := mustAcquire(t, e.store, "b", time.Minute)
	if b.Token <= a.Token {
		t.Fatalf("takeover token %d, want > %d", b.Token, a.Token)
	}

	err := e.store.Renew(ctx, a)
	if !errors.Is(err, ErrNotLeader) || !errors.As(err, &nl) || nl.Holder != "b" || nl.Token != b.Token {
		t.Fatalf("old leader's Renew: got %v, want NotLeaderError naming b", err)
	}
	before := dump(t, e.rdb, e.store)
	if _, err := e.store.Commit(ctx, a, fullBatch(3)); !errors.Is(err, ErrStaleLeader) {
		t.Fatalf("old leader's Commit: got %v, want ErrStaleLeader", err)
	}
	if _, err := e.store.Prune(ctx, a, time.Now(), 10); !errors.Is(err, ErrStaleLeader) {
		t.Fatalf("old leader's Prune: got %v, want ErrStaleLeader", err)
	}
	sameDump(t, "stale writes", before, dump(t, e.rdb, e.store))
	mustCommit(t, e.store, b, fullBatch(2))
}

func TestLeaseTokensIncreaseOverManyLeaders(t *testing.T) {
	e := newEnv(t)
	var last int64
	for i := range 20 {
		holder := string(rune('a' + i%3))
		l := mustAcquire(t, e.store, holder, time.Minute)
		if l.Token <= last {
			t.Fatalf("leader %d: token %d, want > %d", i, l.Token, last)
		}
		last = l.Token
		if err := e.store.Release(ctxT(t), l); err != nil {
			t.Fatal(err)
		}
	}
}

// A Redis that lost the counter but kept the fence (a partial restore) must not
// hand out a token that already wrote.
func TestAcquireSeedsTokenAboveFence(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	a := mustAcquire(t, e.store, "a", time.Minute)
	mustCommit(t, e.store, a, fullBatch(1))
	if err := e.rdb.Set(ctx, e.store.k.fence, 41, 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := e.rdb.Del(ctx, e.store.k.seq, e.store.k.lease).Err(); err != nil {
		t.Fatal(err)
	}
	b := mustAcquire(t, e.store, "b", time.Minute)
	if b.Token != 42 {
		t.Fatalf("token after losing the counter = %d, want 42 (fence 41 + 1)", b.Token)
	}
}

func TestLeaseInvalidArguments(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	if _, err := e.store.Acquire(ctx, "", time.Minute); !errors.Is(err, ErrInvalid) {
		t.Errorf("empty holder: %v, want ErrInvalid", err)
	}
	if _, err := e.store.Acquire(ctx, "a", 0); !errors.Is(err, ErrInvalid) {
		t.Errorf("zero ttl: %v, want ErrInvalid", err)
	}
	if err := e.store.Renew(ctx, Lease{Holder: "a", Token: 1}); !errors.Is(err, ErrInvalid) {
		t.Errorf("renew without ttl: %v, want ErrInvalid", err)
	}
}

// expireLease makes l run out now, as a holder that stalled past its TTL would
// see: it renews l with a TTL of 1 ms and waits until Redis has dropped it. Tests
// take leases with long TTLs and expire them on purpose, so a test that stalls
// never loses a lease before it means to.
func expireLease(t *testing.T, s *Store, l Lease) {
	t.Helper()
	short := l
	short.TTL = time.Millisecond
	if err := s.Renew(ctxT(t), short); err != nil {
		t.Fatalf("renew with a 1 ms TTL: %v", err)
	}
	simtest.WaitFor(t, 5*time.Second, "lease expiry", func() bool {
		h, _, _, err := s.Leader(ctxT(t))
		return err == nil && h == ""
	})
}

// Holders reads every account's holder at once; free leases are absent.
func TestHolders(t *testing.T) {
	e := newEnv(t)
	other := mustStore(t, e.rdb, uniqueAccount(t)+"-other")
	mustAcquire(t, e.store, "replica-1/x", time.Minute)
	free := uniqueAccount(t) + "-free"
	got, err := Holders(ctxT(t), e.rdb, []string{e.store.Account(), other.Account(), free})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[e.store.Account()] != "replica-1/x" {
		t.Fatalf("Holders = %v, want only %s held by replica-1/x", got, e.store.Account())
	}
}
