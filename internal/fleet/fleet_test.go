package fleet

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/testkit/redistest"
	"github.com/callbus/callbus/internal/testkit/simtest"
	"github.com/rs/zerolog"
)

// Three members share 300 accounts, each about a third, by rendezvous hashing; a member leaving
// gracefully hands its accounts over (each new work starts after the old one
// returned, long before the TTL), and a member joining takes only its own share.
func TestFleetSpreadsAndHandsOff(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	log := &simtest.Buffer{}
	dumpOnFailure(t, log)
	src, rec := newSource(accountNames(300)...), newRecorder()
	ttl := WithTTL(time.Minute) // a move within waitLimit is then a hand-off, not an expiry
	p0 := join(t, rdb, "poller-0", src, rec, log, ttl)
	p1 := join(t, rdb, "poller-1", src, rec, log, ttl)
	p2 := join(t, rdb, "poller-2", src, rec, log, ttl)
	three := []string{"poller-0", "poller-1", "poller-2"}
	simtest.WaitFor(t, waitLimit, "300 accounts on their owners among 3", func() bool { return converged(src, rec, three, p0, p1, p2) })
	for _, p := range []*member{p0, p1, p2} {
		if n := len(p.Owned()); n < 80 || n > 120 {
			t.Errorf("%s runs %d of 300 accounts, want 100 ± 20", p.replica, n)
		}
		for _, a := range p.Owned() {
			if o := Owner(a, three); o != p.replica {
				t.Errorf("%s runs %s, owned by %s", p.replica, a, o)
			}
		}
	}

	before, startsBefore := rec.snapshot()
	overlapsBefore := len(rec.overlaps())
	p2.leave(t)
	two := []string{"poller-0", "poller-1"}
	simtest.WaitFor(t, waitLimit, "the accounts of poller-2 handed over", func() bool { return converged(src, rec, two, p0, p1) })
	if o := rec.overlaps()[overlapsBefore:]; len(o) > 0 {
		t.Errorf("hand-off: a new owner started before the old one returned: %v", o)
	}
	_, startsAfter := rec.snapshot()
	for a, n := range startsAfter {
		if moved := before[a] == "poller-2"; moved != (n != startsBefore[a]) {
			t.Errorf("%s: was on %s, started %d more times; only poller-2's accounts should move", a, before[a], n-startsBefore[a])
		}
	}

	before, _ = rec.snapshot()
	p3 := join(t, rdb, "poller-3", src, rec, log, ttl)
	withNew := []string{"poller-0", "poller-1", "poller-3"}
	simtest.WaitFor(t, waitLimit, "poller-3 took its share", func() bool { return converged(src, rec, withNew, p0, p1, p3) })
	after, _ := rec.snapshot()
	for a, r := range after {
		if r != before[a] && r != "poller-3" {
			t.Errorf("join: %s moved from %s to %s, want moves to poller-3 only", a, before[a], r)
		}
	}
}

// A new Digest restarts the account's work (after the old one returned); an
// account no longer listed stops; a new one starts.
func TestFleetFollowsTheAccounts(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	log := &simtest.Buffer{}
	dumpOnFailure(t, log)
	src, rec := newSource("a", "b"), newRecorder()
	m := join(t, rdb, "solo", src, rec, log)
	simtest.WaitFor(t, waitLimit, "a and b running", func() bool { return converged(src, rec, []string{"solo"}, m) })

	src.set("a", "v2")
	simtest.WaitFor(t, waitLimit, "a restarted", func() bool { _, s := rec.snapshot(); return s["a"] == 2 })
	src.remove("b")
	src.set("c", "v1")
	simtest.WaitFor(t, waitLimit, "b stopped, c running", func() bool { return converged(src, rec, []string{"solo"}, m) })
	if got := m.Owned(); !slices.Equal(got, []string{"a", "c"}) {
		t.Errorf("Owned = %v, want [a c]", got)
	}
	if _, s := rec.snapshot(); s["b"] != 1 || s["c"] != 1 {
		t.Errorf("starts = %v, want b and c once", s)
	}
	if o := rec.overlaps(); len(o) > 0 {
		t.Errorf("a restart overlapped its predecessor: %v", o)
	}
}

// A work that returns on its own runs again, after a delay.
func TestFleetRestartsAWorkThatReturned(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	log := &simtest.Buffer{}
	dumpOnFailure(t, log)
	f, err := New(rdb, "solo", zerolog.New(log), WithName(fleetName(t)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	calls := make(chan int, 10)
	n := 0
	go func() {
		_ = f.Run(ctx, newSource("a").accounts, func(ctx context.Context, _ string) error {
			n++
			calls <- n
			if n == 1 {
				return errors.New("upstream refused the key")
			}
			if n == 2 {
				panic("a bug in one account")
			}
			<-ctx.Done()
			return nil
		})
	}()
	for want := 1; want <= 3; want++ {
		select {
		case got := <-calls:
			if got != want {
				t.Fatalf("call %d, want %d", got, want)
			}
		case <-time.After(waitLimit):
			t.Fatalf("work not run a %d time", want)
		}
	}
	if !strings.Contains(log.String(), "upstream refused the key") || !strings.Contains(log.String(), "a bug in one account") {
		t.Errorf("the error and the panic are not logged:\n%s", log)
	}
}

// A member that stops heartbeating (a crash) leaves the fleet after its TTL, and
// its accounts move to the live members.
func TestFleetDeadMemberExpires(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	log := &simtest.Buffer{}
	dumpOnFailure(t, log)
	src, rec := newSource(accountNames(20)...), newRecorder()
	ttl := WithTTL(3 * time.Second)
	dead, err := New(rdb, "dead", zerolog.Nop(), WithName(fleetName(t)), ttl)
	if err != nil {
		t.Fatal(err)
	}
	lastBeat := time.Now()
	if _, _, err := dead.readMembers(t.Context(), true, nil); err != nil { // one heartbeat, then silence
		t.Fatal(err)
	}
	m := join(t, rdb, "alive", src, rec, log, ttl)
	both := []string{"alive", "dead"}
	simtest.WaitFor(t, waitLimit, "alive runs its share while dead's membership lasts", func() bool {
		running, _ := rec.snapshot()
		for _, a := range src.accounts() {
			if _, on := running[a.Name]; on != (Owner(a.Name, both) == "alive") {
				return false
			}
		}
		return slices.Equal(m.Members(), both)
	})
	simtest.WaitFor(t, waitLimit, "the dead member's accounts moved", func() bool { return converged(src, rec, []string{"alive"}, m) })
	// Expected: the TTL plus at most one check (1 s); twice the TTL allows for a
	// loaded machine without letting a membership that never expires pass.
	if moved := time.Since(lastBeat); moved > 2*dead.ttl {
		t.Errorf("the dead member's accounts moved %s after its last heartbeat, TTL %s", moved, dead.ttl)
	} else {
		t.Logf("the dead member's accounts moved %s after its last heartbeat (TTL %s)", moved, dead.ttl)
	}
}

// With Redis gone, the member keeps running its accounts and logs; when Redis
// comes back (empty), it joins again.
func TestFleetSurvivesRedisOutage(t *testing.T) {
	srv := redistest.StartPrivate(t)
	rdb := srv.Client(t)
	log := &simtest.Buffer{}
	dumpOnFailure(t, log)
	src, rec := newSource("a", "b", "c"), newRecorder()
	m := join(t, rdb, "solo", src, rec, log, WithTTL(600*time.Millisecond))
	simtest.WaitFor(t, waitLimit, "accounts running", func() bool { return converged(src, rec, []string{"solo"}, m) })
	srv.Stop()
	simtest.WaitFor(t, waitLimit, "the outage logged", func() bool { return strings.Contains(log.String(), "Redis unreachable") })
	running, _ := rec.snapshot()
	if len(running) != 3 || !slices.Equal(m.Owned(), []string{"a", "b", "c"}) {
		t.Errorf("during the outage: running %v, Owned %v; want a, b, c kept", running, m.Owned())
	}
	srv.Restart(t)
	simtest.WaitFor(t, waitLimit, "membership renewed in the new Redis", func() bool {
		ms, err := rdb.ZRange(t.Context(), membersKey(fleetName(t)), 0, -1).Result()
		return err == nil && slices.Equal(ms, []string{"solo"})
	})
	if _, starts := rec.snapshot(); !maps.Equal(starts, map[string]int{"a": 1, "b": 1, "c": 1}) {
		t.Errorf("starts = %v: the outage restarted works", starts)
	}
}

// The membership is one key: the fleet works on Redis Cluster.
func TestFleetOnCluster(t *testing.T) {
	rdb := redistest.StartCluster(t)
	log := &simtest.Buffer{}
	dumpOnFailure(t, log)
	src, rec := newSource(accountNames(10)...), newRecorder()
	a := join(t, rdb, "a", src, rec, log)
	b := join(t, rdb, "b", src, rec, log)
	simtest.WaitFor(t, waitLimit, "10 accounts on 2 members", func() bool { return converged(src, rec, []string{"a", "b"}, a, b) })
}

func TestNewRefuses(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	for _, tt := range []struct {
		name, replica string
		opts          []Option
	}{
		{"empty replica", "", nil},
		{"braces", "a{b}", nil},
		{"space", "a b", nil},
		{"bad fleet name", "a", []Option{WithName("x}")}},
		{"tiny TTL", "a", []Option{WithTTL(time.Millisecond)}},
	} {
		if _, err := New(rdb, tt.replica, zerolog.Nop(), tt.opts...); err == nil {
			t.Errorf("%s: New accepted it", tt.name)
		}
	}
	if _, err := New(nil, "a", zerolog.Nop()); err == nil {
		t.Error("New accepted a nil client")
	}
}

// A member stopping while Redis is gone still returns, after its works did.
func TestFleetStopsWithoutRedis(t *testing.T) {
	srv := redistest.StartPrivate(t)
	rdb := srv.Client(t)
	log := &simtest.Buffer{}
	dumpOnFailure(t, log)
	src, rec := newSource("a", "b"), newRecorder()
	m := join(t, rdb, "solo", src, rec, log, WithTTL(600*time.Millisecond))
	simtest.WaitFor(t, waitLimit, "accounts running", func() bool { return converged(src, rec, []string{"solo"}, m) })
	srv.Stop()
	m.leave(t)
	if running, _ := rec.snapshot(); len(running) != 0 {
		t.Errorf("works still running after Run returned: %v", running)
	}
	if !strings.Contains(log.String(), "could not remove this replica's membership") {
		t.Errorf("the failed leave is not logged:\n%s", log)
	}
}
