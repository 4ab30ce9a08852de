package cursor

import (
	"context"
	"crypto/rand"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/event"
	"github.com/callbus/callbus/internal/testkit/redistest"
	"github.com/redis/go-redis/v9"
)

// env is one test's Redis, client and store.
type env struct {
	srv   *redistest.Server
	rdb   *redis.Client
	store *Store
}

// newEnv starts a private Redis (or uses CALLBUS_TEST_REDIS_URL) and a store for a
// fresh account, so tests sharing an external server never see each other's keys.
func newEnv(t testing.TB, opts ...Option) env {
	t.Helper()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	return env{srv: srv, rdb: rdb, store: mustStore(t, rdb, uniqueAccount(t), opts...)}
}

func mustStore(t testing.TB, rdb redis.UniversalClient, account string, opts ...Option) *Store {
	t.Helper()
	s, err := New(rdb, account, opts...)
	if err != nil {
		t.Fatalf("New(%q): %v", account, err)
	}
	return s
}

// uniqueAccount is a valid account name unique to this test run.
func uniqueAccount(t testing.TB) string {
	name := strings.Map(func(r rune) rune {
		if r == '/' || r == ' ' || r == '{' || r == '}' {
			return '_'
		}
		return r
	}, t.Name())
	return name + "-" + rand.Text()[:8]
}

func ctxT(t testing.TB) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func mustAcquire(t testing.TB, s *Store, holder string, ttl time.Duration) Lease {
	t.Helper()
	l, err := s.Acquire(ctxT(t), holder, ttl)
	if err != nil {
		t.Fatalf("Acquire(%s): %v", holder, err)
	}
	return l
}

func mustCommit(t testing.TB, s *Store, l Lease, b Batch) CommitResult {
	t.Helper()
	res, err := s.Commit(ctxT(t), l, b)
	if err != nil {
		t.Fatalf("Commit: %v", err)
	}
	return res
}

// accountKeys returns every key of the store's account in Redis.
func accountKeys(t testing.TB, rdb *redis.Client, s *Store) []string {
	t.Helper()
	var out []string
	iter := rdb.Scan(ctxT(t), 0, "*"+s.Account()+"*", 100).Iterator()
	for iter.Next(ctxT(t)) {
		out = append(out, iter.Val())
	}
	if err := iter.Err(); err != nil {
		t.Fatalf("scan: %v", err)
	}
	return out
}

// dump returns the serialized value of every key of the store's account, to check
// that a refused write changed nothing.
func dump(t testing.TB, rdb *redis.Client, s *Store) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, k := range accountKeys(t, rdb, s) {
		v, err := rdb.Dump(ctxT(t), k).Result()
		if err != nil {
			t.Fatalf("dump %s: %v", k, err)
		}
		out[k] = v
	}
	return out
}

func sameDump(t testing.TB, what string, before, after map[string]string) {
	t.Helper()
	if !maps.Equal(before, after) {
		for k := range maps.Keys(after) {
			if before[k] != after[k] {
				t.Errorf("%s: key %s changed", what, k)
			}
		}
		for k := range maps.Keys(before) {
			if _, ok := after[k]; !ok {
				t.Errorf("%s: key %s deleted", what, k)
			}
		}
	}
}

// fullBatch touches every part of the state.
func fullBatch(n int) Batch {
	b := Batch{Cursors: map[string]string{"calls.high_water": "2024-05-01T10:00:00Z"}}
	for i := range n {
		id := string(rune('a' + i))
		b.Snapshots = append(b.Snapshots, Snapshot{Kind: "call", ID: id, Data: []byte("snap-" + id)})
		b.Open = append(b.Open, Tracked{ID: id, At: time.UnixMilli(int64(1000 + i))})
		b.Events = append(b.Events, event.Message{ID: "ev-" + id, Subject: "callcenter.x.call.created", Data: []byte(`{"id":"` + id + `"}`)})
	}
	return b
}

func redisZ(score float64, member string) redis.Z { return redis.Z{Score: score, Member: member} }
