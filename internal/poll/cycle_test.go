package poll

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/sim"
)

// everything polls every resource.
var everything = map[string]time.Duration{ResCalls: time.Second, ResMetrics: time.Second, ResUsers: time.Second, ResUserStatuses: time.Second, ResTeams: time.Second}

// outboxTypes counts the outbox's events by type (the subject's tail).
func outboxTypes(t *testing.T, store *cursor.Store) map[string]int {
	t.Helper()
	recs, err := store.ReadOutbox(t.Context(), "", 100000)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, r := range recs {
		out[strings.TrimPrefix(r.Subject, "callcenter.acme.")]++
	}
	return out
}

// pollAll runs one cycle of every resource.
func pollAll(t *testing.T, p *Poller) {
	t.Helper()
	for _, res := range p.resourcesByPriority() {
		if err := p.cycle(t.Context(), res); err != nil {
			t.Fatalf("%s: %v", res, err)
		}
	}
}

// Cycles driven step by step through a simulated half hour announce every call,
// user and team once, end and finalize calls, and announce nothing more once the
// world stands still; also when /calls ignores by_time.
func TestCyclesFollowTheWorld(t *testing.T) {
	for _, tc := range []struct {
		name  string
		tweak func(*sim.Config)
	}{
		{"by_time honoured", nil},
		{"calls ignore by_time, random order", func(c *sim.Config) { c.CallsIgnoreByTime, c.Order = true, sim.RandomOrder }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := sim.Config{Agents: 8, CallRate: 4, Backlog: 40}
			if tc.tweak != nil {
				tc.tweak(&cfg)
			}
			p, store, s := newPollerOf(t, cfg, everything)
			for range 30 {
				s.Advance(time.Minute)
				pollAll(t, p)
			}
			pollAll(t, p) // what the last step finalized
			got := outboxTypes(t, store)
			st := s.Stats()
			if got["call.created"] != st.Calls || got["call.ended"] != st.CallsEnded || got["user.created"] != st.Users || got["team.created"] != st.Teams {
				t.Errorf("events %v; the world %+v", got, st)
			}
			if got["metric.finalized"] == 0 || got["metric.finalized"] > st.MetricsFinalized || got["participant.status_changed"] == 0 {
				t.Errorf("events %v; the world %+v", got, st)
			}
			n, err := store.OutboxLen(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			pollAll(t, p)
			if again, _ := store.OutboxLen(t.Context()); again != n {
				t.Errorf("a world standing still: %d events more, want none", again-n)
			}
		})
	}
}

// Run schedules every resource, reports cycles and intervals to the observers,
// and returns ctx's error when ctx ends.
func TestRunSchedulesEveryResource(t *testing.T) {
	var mu sync.Mutex
	cycles := map[string]int{}
	var intervals map[string]time.Duration
	observe := []Option{
		WithCycleObserver(func(_ context.Context, res string, _ time.Duration, requests int, err error) {
			mu.Lock()
			defer mu.Unlock()
			if err == nil && requests > 0 {
				cycles[res]++
			}
		}),
		WithIntervalObserver(func(_ context.Context, eff map[string]time.Duration) { mu.Lock(); intervals = eff; mu.Unlock() }),
	}
	fast := map[string]time.Duration{}
	for r := range everything {
		fast[r] = 20 * time.Millisecond
	}
	p, _, _ := newPollerOf(t, sim.Config{Agents: 3, CallRate: 2, Backlog: 5}, fast, observe...)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx, p.lease) }()
	deadline := time.Now().Add(20 * time.Second)
	for {
		mu.Lock()
		least, seen := len(cycles), fmt.Sprint(cycles)
		for _, c := range cycles {
			least = min(least, c)
		}
		all := len(cycles) == len(everything)
		mu.Unlock()
		if all && least >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("cycles by resource %s after 20s, want two of each", seen)
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Run returned %v, want context.Canceled", err)
	}
	eff := p.Effective()
	mu.Lock()
	defer mu.Unlock()
	if len(eff) != len(everything) || len(intervals) != len(everything) {
		t.Errorf("effective intervals %v (hook %v), want one per resource", eff, intervals)
	}
}

// A replica whose lease another one took returns ErrLostLease at its next commit.
func TestRunLostLease(t *testing.T) {
	p, store, _ := newPollerOf(t, sim.Config{Agents: 3}, everything)
	stale := p.lease()
	if err := store.Release(t.Context(), stale); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Acquire(t.Context(), "other", time.Minute); err != nil {
		t.Fatal(err)
	}
	err := p.Run(t.Context(), func() cursor.Lease { return stale })
	if !errors.Is(err, ErrLostLease) {
		t.Fatalf("Run with a lease taken over: %v, want ErrLostLease", err)
	}
}
