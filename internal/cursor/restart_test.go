package cursor

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/testkit/redistest"
	"github.com/redis/go-redis/v9"
)

// While Redis is down every call returns an error (no panic, no redis.Nil taken
// for "empty"); after Redis comes back, empty, the store works again and a lease
// from before the restart cannot write.
func TestRedisRestart(t *testing.T) {
	srv := redistest.StartPrivate(t) // stopped and started again below
	// No retries, so that each call with Redis down fails at once.
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: -1, DialTimeout: time.Second, DialerRetries: 1, DialerRetryTimeout: time.Millisecond})
	t.Cleanup(func() { _ = rdb.Close() })
	s := mustStore(t, rdb, uniqueAccount(t))
	old := mustAcquire(t, s, "a", time.Minute)
	mustCommit(t, s, old, fullBatch(2))

	srv.Stop()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	calls := map[string]func() error{
		"Acquire": func() error { _, err := s.Acquire(ctx, "b", time.Minute); return err },
		"Renew":   func() error { return s.Renew(ctx, old) },
		"Release": func() error { return s.Release(ctx, old) },
		"Leader":  func() error { _, _, _, err := s.Leader(ctx); return err },
		"Commit":  func() error { _, err := s.Commit(ctx, old, fullBatch(1)); return err },
		"Prune":   func() error { _, err := s.Prune(ctx, old, time.Now(), 1); return err },
		"GetSnapshots": func() error {
			_, err := s.GetSnapshots(ctx, "call", []string{"a"})
			return err
		},
		"AllSnapshots": func() error {
			for _, err := range s.AllSnapshots(ctx, "call") {
				if err != nil {
					return err
				}
			}
			return nil
		},
		"OpenCalls":    func() error { _, err := s.OpenCalls(ctx, 0); return err },
		"GetCursor":    func() error { _, _, err := s.GetCursor(ctx, "x"); return err },
		"Cursors":      func() error { _, err := s.Cursors(ctx); return err },
		"Counts":       func() error { _, err := s.Counts(ctx); return err },
		"ReadOutbox":   func() error { _, err := s.ReadOutbox(ctx, "", 10); return err },
		"WaitOutbox":   func() error { _, err := s.WaitOutbox(ctx, "", 10, 10*time.Millisecond); return err },
		"TrimOutbox":   func() error { return s.TrimOutbox(ctx, "1-0") },
		"OutboxLen":    func() error { _, err := s.OutboxLen(ctx); return err },
		"OutboxOldest": func() error { _, _, err := s.OutboxOldest(ctx); return err },
		"MemoryUsage":  func() error { _, _, err := s.MemoryUsage(ctx); return err },
	}
	for name, call := range calls {
		err := call()
		if err == nil {
			t.Errorf("%s with Redis down: no error", name)
		}
		for _, sentinel := range []error{ErrNotLeader, ErrStaleLeader, ErrInvalid, redis.Nil} {
			if errors.Is(err, sentinel) {
				t.Errorf("%s with Redis down: %v, must not look like %v", name, err, sentinel)
			}
		}
	}

	srv.Restart(t) // empty: persistence is off
	if _, err := s.Commit(ctx, old, fullBatch(1)); !errors.Is(err, ErrStaleLeader) {
		t.Fatalf("commit with a lease from before the restart: %v, want ErrStaleLeader", err)
	}
	// The counter restarted too: b may get a's old token, but not a's identity.
	b := mustAcquire(t, s, "b", time.Minute)
	if _, err := s.Commit(ctx, Lease{Holder: old.Holder, Token: b.Token, TTL: time.Minute}, fullBatch(1)); !errors.Is(err, ErrStaleLeader) {
		t.Fatalf("commit by a's identity with b's token: %v, want ErrStaleLeader", err)
	}
	res := mustCommit(t, s, b, fullBatch(2)) // scripts reloaded through EVAL
	if err := s.TrimOutbox(ctx, res.StreamIDs[1]); err != nil {
		t.Fatal(err)
	}
	if n, err := s.OutboxLen(ctx); err != nil || n != 0 {
		t.Fatalf("OutboxLen after restart = %d %v", n, err)
	}
}
