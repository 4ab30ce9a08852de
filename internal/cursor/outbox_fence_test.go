package cursor

import (
	"errors"
	"testing"
	"time"
)

func TestHolds(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	a := mustAcquire(t, e.store, "a", time.Minute)
	if ttl, err := e.store.Holds(ctx, a); err != nil || ttl <= 0 || ttl > time.Minute {
		t.Fatalf("Holds(a) = %s, %v; want 0 < ttl <= 1m", ttl, err)
	}
	stale := a
	stale.Token-- // an earlier lease of the same holder
	if _, err := e.store.Holds(ctx, stale); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("Holds(older token) = %v, want ErrNotLeader", err)
	}
	if err := e.store.Release(ctx, a); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.Holds(ctx, a); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("Holds after release = %v, want ErrNotLeader", err)
	}
	b := mustAcquire(t, e.store, "b", time.Minute)
	var nl *NotLeaderError
	if _, err := e.store.Holds(ctx, a); !errors.As(err, &nl) || nl.Holder != "b" || nl.Token != b.Token {
		t.Fatalf("Holds(a) with b leading = %v, want b's holder and token", err)
	}
}
